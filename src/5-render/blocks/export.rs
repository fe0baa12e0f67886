//! Data downloads: the records behind a table or chart, as CSV and JSON
//! files published beside the page, with links under the block. Both are
//! made from the same values the block shows, before formatting.

use crate::expr::Scalar;
use crate::html::escape;
use serde_json::Value;

/// Folder (inside the campaign) that holds every download.
pub(super) const FOLDER: &str = "downloads";

/// One block's data: column names and one row of values per record.
pub(super) struct Export {
    pub(crate) columns: Vec<String>,
    pub(crate) rows: Vec<Vec<Scalar>>,
}

/// A generated file: its path inside the campaign, and its bytes.
#[derive(Debug, Clone)]
pub(crate) struct Download {
    pub(crate) path: String,
    pub(crate) bytes: Vec<u8>,
}

impl Export {
    pub(super) fn new(columns: Vec<String>) -> Self {
        Export {
            columns,
            rows: Vec::new(),
        }
    }

    /// RFC 4180: comma separated, CRLF line ends, fields quoted when they
    /// hold a comma, quote or line break (and a record of one empty
    /// field, which would otherwise be a blank line).
    pub(super) fn csv(&self) -> Vec<u8> {
        let mut out = csv::WriterBuilder::new()
            .terminator(csv::Terminator::CRLF)
            .flexible(true)
            .from_writer(Vec::new());
        // Writing into memory cannot fail.
        let _ = out.write_record(&self.columns);
        for row in &self.rows {
            let _ = out.write_record(row.iter().map(|v| clean(v).to_string()));
        }
        out.into_inner().unwrap_or_default()
    }

    /// An array of objects keyed by column name, in column order, one
    /// record per line; numbers stay numbers.
    pub(super) fn json(&self) -> Vec<u8> {
        let keys: Vec<String> = self
            .columns
            .iter()
            .map(|c| Value::from(c.as_str()).to_string())
            .collect();
        let mut out = String::from("[");
        for (i, row) in self.rows.iter().enumerate() {
            out.push_str(if i == 0 { "\n  {" } else { ",\n  {" });
            for (j, (k, v)) in keys.iter().zip(row).enumerate() {
                if j > 0 {
                    out.push_str(", ");
                }
                out.push_str(k);
                out.push_str(": ");
                out.push_str(&json_value(v).to_string());
            }
            out.push('}');
        }
        out.push_str(if self.rows.is_empty() { "]\n" } else { "\n]\n" });
        out.into_bytes()
    }

    /// Both files under `downloads/STEM.{csv,json}`, and the links to them.
    pub(super) fn publish(&self, stem: &str, what: &str) -> (String, Vec<Download>) {
        let files = vec![
            Download {
                path: format!("{FOLDER}/{stem}.csv"),
                bytes: self.csv(),
            },
            Download {
                path: format!("{FOLDER}/{stem}.json"),
                bytes: self.json(),
            },
        ];
        let html = format!(
            "<p class=\"downloads\">Download the {} data: <a href=\"{}\" download type=\"text/csv\">CSV</a> · <a href=\"{}\" download type=\"application/json\">JSON</a></p>",
            escape(what),
            escape(&files[0].path),
            escape(&files[1].path)
        );
        (html, files)
    }
}

/// Derived figures carry float noise (`22.199999999999996`); twelve
/// significant digits are more than any measurement here has.
fn clean(v: &Scalar) -> Scalar {
    match v {
        Scalar::Number(n, repr) if repr.len() > 14 && n.is_finite() => {
            let rounded: f64 = format!("{n:.11e}").parse().unwrap_or(*n);
            Scalar::Number(rounded, rounded.to_string())
        }
        other => other.clone(),
    }
}

fn json_value(v: &Scalar) -> Value {
    match clean(v) {
        Scalar::Number(n, repr) => repr
            .parse::<serde_json::Number>()
            .ok()
            .or_else(|| serde_json::Number::from_f64(n))
            .map_or(Value::Null, Value::Number),
        Scalar::Text(s) => Value::String(s),
        Scalar::Bool(b) => Value::Bool(b),
        Scalar::Null => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Export {
        let mut e = Export::new(vec!["case".into(), "tok/s".into()]);
        e.rows.push(vec![
            Scalar::Text("ctx 4k, \"warm\"".into()),
            Scalar::Number(88.5, "88.50".into()),
        ]);
        e.rows.push(vec![Scalar::Text("cold".into()), Scalar::Null]);
        e.rows.push(vec![
            Scalar::Text("derived".into()),
            Scalar::Number(22.199999999999996, "22.199999999999996".into()),
        ]);
        e
    }

    #[test]
    fn csv_quotes_only_what_needs_it() {
        let csv = String::from_utf8(sample().csv()).unwrap();
        assert_eq!(
            csv,
            "case,tok/s\r\n\"ctx 4k, \"\"warm\"\"\",88.50\r\ncold,\r\nderived,22.2\r\n"
        );
        let mut one = Export::new(vec!["note".into()]);
        one.rows.push(vec![Scalar::Text("a\nb".into())]);
        one.rows.push(vec![Scalar::Null]);
        let csv = String::from_utf8(one.csv()).unwrap();
        assert_eq!(csv, "note\r\n\"a\nb\"\r\n\"\"\r\n");
    }

    #[test]
    fn json_keeps_numbers_as_written() {
        let v: Value = serde_json::from_slice(&sample().json()).unwrap();
        assert_eq!(v[0]["tok/s"], 88.5);
        assert_eq!(v[0]["case"], "ctx 4k, \"warm\"");
        assert!(v[1]["tok/s"].is_null());
        let text = String::from_utf8(sample().json()).unwrap();
        assert!(text.starts_with("[\n  {\"case\": "), "{text}");
    }
}
