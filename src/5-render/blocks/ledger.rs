//! `ledger` blocks (retained failures) and `manifest` blocks (every file
//! with its verification verdict).

use super::{Ctx, DataText, Problem, Rendered};
use crate::expr::{Ref, Template};
use crate::html::escape;
use serde::{Deserialize, Serialize};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LedgerSpec {
    pub(crate) source: String,
    #[serde(default)]
    pub(crate) pointer: Option<String>,
    /// The data file's format, when its content is ambiguous.
    #[serde(default)]
    pub(crate) format: Option<String>,
    #[serde(default)]
    pub(crate) title: Option<String>,
    /// Only the records this keeps become entries (failed runs among
    /// all of a tool's records).
    #[serde(default, rename = "where")]
    pub(crate) filter: Option<Filter>,
    /// Each kept record's entry, its texts templates over the record's
    /// fields (`evidence` defaults to the record's file); without it
    /// records must already be ledger entries.
    #[serde(default)]
    pub(crate) entry: Option<LedgerEntry>,
}

/// `{"field": F, "equals": V}` or `{"field": F, "above": N}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Filter {
    pub(crate) field: String,
    #[serde(default)]
    pub(crate) equals: Option<serde_json::Value>,
    #[serde(default)]
    pub(crate) above: Option<f64>,
}

impl LedgerSpec {
    pub(crate) fn check(&self) -> Result<(), String> {
        if let Some(f) = &self.filter {
            if f.equals.is_some() == f.above.is_some() {
                return Err(format!(
                    "`where` on `{}` needs exactly one of `equals` or `above`",
                    f.field
                ));
            }
        }
        if let Some(e) = &self.entry {
            for t in [&e.id, &e.gate, &e.result]
                .into_iter()
                .chain(&e.impact)
                .chain(&e.evidence)
            {
                Template::parse(t).map_err(|m| format!("ledger `entry`: {m}"))?;
            }
        }
        Ok(())
    }
}

impl Filter {
    fn keeps(&self, rec: &serde_json::Value) -> bool {
        let v = rec.pointer(&Ref::new(&self.field).0);
        match (&self.equals, self.above) {
            (Some(want), _) => v == Some(want),
            (None, Some(n)) => v.and_then(serde_json::Value::as_f64).is_some_and(|x| x > n),
            (None, None) => true,
        }
    }
}

impl LedgerEntry {
    /// This entry's templates filled from `rec`, a record of `file`.
    fn fill(&self, rec: &serde_json::Value, file: &str) -> Result<LedgerEntry, String> {
        let t = |s: &str| -> Result<String, String> {
            Template::parse(s)?.render(rec).map_err(|e| e.to_string())
        };
        let evidence = match &self.evidence {
            Some(e) => t(e)?,
            None => rec
                .get("source_path")
                .and_then(serde_json::Value::as_str)
                .unwrap_or(file)
                .to_string(),
        };
        Ok(LedgerEntry {
            id: t(&self.id)?,
            gate: t(&self.gate)?,
            result: t(&self.result)?,
            status: self.status,
            impact: self.impact.as_deref().map(t).transpose()?,
            evidence: Some(evidence),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Status {
    #[default]
    Failed,
    Excluded,
    Boundary,
    Open,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Failed => "failed",
            Status::Excluded => "excluded",
            Status::Boundary => "boundary",
            Status::Open => "open",
        }
    }
}

/// One retained failure.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LedgerEntry {
    pub(crate) id: String,
    pub(crate) gate: String,
    pub(crate) result: String,
    #[serde(default)]
    pub(crate) status: Status,
    #[serde(default)]
    pub(crate) impact: Option<String>,
    #[serde(default)]
    pub(crate) evidence: Option<String>,
}

pub(super) fn render(spec: &LedgerSpec, ctx: &Ctx) -> Result<Rendered, Problem> {
    let source = ctx.store.load_as(&spec.source, spec.format.as_deref())?;
    let records = source.records(spec.pointer.as_deref())?;
    let mut entries = Vec::with_capacity(records.items.len());
    let mut typed = Vec::new();
    for (rec, label) in &records.items {
        if !spec.filter.as_ref().is_none_or(|f| f.keeps(rec)) {
            continue;
        }
        let entry: LedgerEntry = match &spec.entry {
            Some(e) => e.fill(rec, &source.public),
            None => serde_json::from_value((*rec).clone()).map_err(|e| e.to_string()),
        }
        .map_err(|e| Problem::Here(format!("ledger record {label}: {e}")))?;
        if spec.entry.is_none() {
            // The record's own texts are typed in the data file (an
            // entry's templates are typed in the block).
            let texts = std::iter::once(&entry.result).chain(&entry.impact);
            typed.extend(texts.map(|t| DataText::of(&source, rec, t, ctx)));
        }
        // What was observed and what it means may quote the data.
        let result = ctx.expand(&entry.result);
        let result = result.map_err(|p| super::at_record_problem(label, "result", p))?;
        let impact = ctx.expand_opt(&entry.impact);
        let impact = impact.map_err(|p| super::at_record_problem(label, "impact", p))?;
        let entry = LedgerEntry {
            result,
            impact,
            ..entry
        };
        if let Some(ev) = &entry.evidence {
            // Records are read redacted: the path is the published name.
            if ctx
                .evidence
                .verified_sha256(ctx.store.public.original(ev))
                .is_none()
            {
                return Err(Problem::Here(format!(
                    "ledger record {label}: evidence `{ev}` is not a file of the campaign"
                )));
            }
        }
        entries.push(entry);
    }
    let mut html = String::from("<figure class=\"block ledger\">");
    if let Some(t) = &spec.title {
        html.push_str(&format!("<figcaption>{}</figcaption>", escape(t)));
    }
    html.push_str(&entries_table(&entries));
    html.push_str(&ctx.source_note(&source));
    html.push_str("</figure>");
    Ok(Rendered {
        html,
        source: Some(source),
        ledger: entries,
        downloads: Vec::new(),
        data_texts: typed,
    })
}

/// The ledger table, shared with the campaign's ledger page.
pub(crate) fn entries_table(entries: &[LedgerEntry]) -> String {
    let mut html = String::from(
        "<div class=\"scroll\" tabindex=\"0\"><table class=\"ledger-table\"><thead><tr><th scope=\"col\">Status</th><th scope=\"col\">Gate</th><th scope=\"col\">Result</th><th scope=\"col\">What it means</th><th scope=\"col\">Evidence</th></tr></thead><tbody>",
    );
    for e in entries {
        let evidence = e
            .evidence
            .as_deref()
            .map(|p| {
                format!(
                    "<a href=\"{}\">{}</a>",
                    escape(&crate::html::file_href(&crate::campaign::published_name(p))),
                    escape(p)
                )
            })
            .unwrap_or_default();
        html.push_str(&format!(
            "<tr id=\"failure-{}\"><td><span class=\"status status-{s}\">{s}</span></td><th scope=\"row\">{}</th><td class=\"result\">{}</td><td>{}</td><td>{}</td></tr>",
            escape(&crate::html::slug(&e.id)),
            escape(&e.gate),
            escape(&e.result),
            escape(e.impact.as_deref().unwrap_or("")),
            evidence,
            s = e.status.as_str(),
        ));
    }
    html.push_str("</tbody></table></div>");
    html
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestSpec {
    #[serde(default)]
    pub(crate) prefix: Option<String>,
}

pub(super) fn render_manifest(spec: &ManifestSpec, ctx: &Ctx) -> String {
    let prefix = spec.prefix.as_deref().unwrap_or("");
    let mut html = String::from("<figure class=\"block manifest\">");
    html.push_str(&manifest_table(
        ctx.evidence,
        ctx.store.public,
        ctx.store.copies,
        prefix,
    ));
    html.push_str("</figure>");
    html
}

/// The file table, shared with the campaign's manifest page.
pub(super) fn manifest_table(
    evidence: &crate::evidence::Evidence,
    public: &crate::public::Public,
    copies: &crate::copies::Copies,
    prefix: &str,
) -> String {
    let mut html = String::from(
        "<div class=\"scroll\" tabindex=\"0\"><table class=\"manifest-table\"><thead><tr><th scope=\"col\">File</th><th scope=\"col\" class=\"num\">Bytes</th><th scope=\"col\">SHA-256</th><th scope=\"col\">Verdict</th></tr></thead><tbody>",
    );
    for f in evidence
        .files
        .iter()
        .filter(|f| public.name(&f.path).starts_with(prefix))
    {
        // The copy's hash and size, never a redacted file's original ones.
        let copy = copies.get(&f.path);
        let sha = copy.map_or("", |k| k.public_sha256());
        let bytes = copy.map_or(0, |k| k.public_bytes());
        html.push_str(&format!(
            "<tr><td><a href=\"{}\">{}</a></td><td class=\"num\">{}</td><td><code class=\"hash\" title=\"{sha}\">{}</code></td><td><span class=\"verdict verdict-{v}\">{v}</span></td></tr>",
            escape(&crate::html::file_href(&public.published(&f.path))),
            escape(public.name(&f.path)),
            crate::expr::Format::parse(",").map(|fm| fm.apply(bytes as f64)).unwrap_or_default(),
            &sha[..sha.len().min(16)],
            v = f.verdict.as_str(),
        ));
    }
    html.push_str("</tbody></table></div>");
    html
}
