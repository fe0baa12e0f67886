//! `exhibit new PATH`: a campaign that builds as it is, for a new user to
//! change rather than write from nothing: campaign.json, an index page
//! with a card, a table, a chart and a ledger over one small CSV file, and
//! its manifest, sealed.

use crate::error::{Context, Result};
use std::path::Path;

/// campaign.json; `{id}` is filled with the folder's name (see [`id_for`]).
const CAMPAIGN: &str = r#"{
  "id": "{id}",
  "title": "My first campaign",
  "date": "2026-01-01",
  "state": "Draft",
  "scope": "Decode throughput of a candidate build against the baseline, three context sizes",
  "decision": "Replace this with what the measurements decided",
  "pages": [{ "file": "index.md", "title": "Overview" }]
}
"#;

const RESULTS: &str = "cell,context,baseline_tok_s,candidate_tok_s,status
short,1024,95.1,126.5,passed
medium,8192,88.0,101.2,passed
long,32768,61.4,58.9,failed
";

const INDEX: &str = r#"## Result

Every figure on this page is read from `data/results.csv`, whose hash the
manifest holds: change the file, run `exhibit seal --update` on this
folder (`.` from inside it), and build again.

```exhibit card
{
  "title": "Headline",
  "source": "data/results.csv",
  "items": [
    { "label": "Candidate, short context", "value": "{/0/candidate_tok_s:.1} tok/s", "conditions": "{/0/context:,} tokens; baseline {/0/baseline_tok_s:.1} tok/s" }
  ]
}
```

## Measurements

```exhibit table
{
  "caption": "Decode throughput",
  "source": "data/results.csv",
  "columns": [
    { "header": "Context", "field": "context", "format": "," },
    { "header": "Baseline (tok/s)", "field": "baseline_tok_s", "format": ".1" },
    { "header": "Candidate (tok/s)", "field": "candidate_tok_s", "format": ".1" },
    { "header": "Change", "derive": "pct_change", "from": "baseline_tok_s", "to": "candidate_tok_s", "format": "+.1%" }
  ]
}
```

```exhibit chart
{
  "title": "Decode throughput by context",
  "source": "data/results.csv",
  "x": { "field": "context", "label": "Context (tokens)", "format": "," },
  "y": { "label": "Decode (tok/s)" },
  "series": [
    { "field": "baseline_tok_s", "name": "Baseline" },
    { "field": "candidate_tok_s", "name": "Candidate" }
  ]
}
```

## Failures

```exhibit ledger
{
  "title": "Cells that failed their gate",
  "source": "data/results.csv",
  "where": { "field": "status", "equals": "failed" },
  "entry": {
    "id": "{cell}",
    "gate": "candidate at least as fast as baseline at {context} tokens",
    "result": "{candidate_tok_s} versus {baseline_tok_s} tok/s",
    "impact": "the candidate is not yet a replacement at long context"
  }
}
```
"#;

/// The id a campaign in `dir` gets: its folder's name as an id (lowercase
/// letters, digits and `-`), so `exhibit new camp` publishes under
/// `site/camp/` as the user expects; `my-campaign` when the name has
/// nothing usable or is a Windows device name.
fn id_for(dir: &Path) -> String {
    let name = std::fs::canonicalize(dir)
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let mut id = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        match c {
            'a'..='z' | '0'..='9' => id.push(c),
            _ if !id.is_empty() && !id.ends_with('-') => id.push('-'),
            _ => {}
        }
    }
    let id = id.trim_end_matches('-').to_string();
    if id.is_empty() || crate::campaign::is_reserved_device(&id) {
        return "my-campaign".into();
    }
    id
}

/// What `exhibit new` says it did and what to type next. The output folder
/// it suggests lies outside the campaign (`exhibit build` refuses one
/// inside), and the page to open is the campaign's own.
fn report(dir: &Path, id: &str) -> String {
    let p = dir.display();
    let inside = dir.components().all(|c| c == std::path::Component::CurDir);
    let out = if inside { "../site" } else { "site" };
    format!(
        "wrote a campaign into {p} (campaign.json, index.md, data/results.csv, manifest.json)\n\
         next: exhibit build {p} -o {out}, then open {out}/{id}/index.html"
    )
}

/// Write the starter campaign into `dir`, which must be empty or absent,
/// and say what to do next.
pub(crate) fn new_campaign(dir: &Path) -> Result<String> {
    if dir.exists() {
        let empty = dir.is_dir()
            && dir
                .read_dir()
                .with_context(|| format!("cannot read `{}`", dir.display()))?
                .next()
                .is_none();
        if !empty {
            crate::error::bail!(
                "`{}` is not an empty folder: `exhibit new` writes a campaign only into a new or empty folder; name one that does not exist yet (`exhibit new my-campaign`)",
                dir.display()
            );
        }
    }
    crate::fsx::create_dir_all(dir)?;
    let id = id_for(dir);
    let campaign = CAMPAIGN.replace("{id}", &id);
    for (rel, text) in [
        ("campaign.json", campaign.as_str()),
        ("index.md", INDEX),
        ("data/results.csv", RESULTS),
    ] {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            crate::fsx::create_dir_all(parent)?;
        }
        crate::fsx::write(&path, text.as_bytes())?;
    }
    crate::seal::seal(dir, false)?;
    Ok(report(dir, &id))
}
