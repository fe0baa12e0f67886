//! Markdown tables, written like the tables of `exhibit` blocks.

use pulldown_cmark::{Alignment, Event, Tag, TagEnd};

/// A Markdown table written like the tables of `exhibit` blocks: in a
/// scroll box, right-aligned columns as `num` cells (tabular figures)
/// rather than an inline style on every cell.
#[derive(Default)]
pub(super) struct MdTable {
    aligns: Vec<Alignment>,
    head: bool,
    column: usize,
}

impl MdTable {
    /// The markup for a table event; `None` for every other event.
    pub(super) fn markup(&mut self, event: &Event) -> Option<&'static str> {
        Some(match event {
            Event::Start(Tag::Table(aligns)) => {
                self.aligns = aligns.clone();
                "<div class=\"scroll\" tabindex=\"0\"><table>"
            }
            Event::End(TagEnd::Table) => "</tbody></table></div>\n",
            Event::Start(Tag::TableHead) => {
                (self.head, self.column) = (true, 0);
                "<thead><tr>"
            }
            Event::End(TagEnd::TableHead) => {
                self.head = false;
                "</tr></thead><tbody>\n"
            }
            Event::Start(Tag::TableRow) => {
                self.column = 0;
                "<tr>"
            }
            Event::End(TagEnd::TableRow) => "</tr>\n",
            Event::Start(Tag::TableCell) => {
                let align = self.aligns.get(self.column).copied();
                match (self.head, align) {
                    (true, Some(Alignment::Right)) => "<th class=\"num\">",
                    (true, Some(Alignment::Center)) => "<th class=\"center\">",
                    (true, _) => "<th>",
                    (false, Some(Alignment::Right)) => "<td class=\"num\">",
                    (false, Some(Alignment::Center)) => "<td class=\"center\">",
                    (false, _) => "<td>",
                }
            }
            Event::End(TagEnd::TableCell) => {
                self.column += 1;
                if self.head {
                    "</th>"
                } else {
                    "</td>"
                }
            }
            _ => return None,
        })
    }
}
