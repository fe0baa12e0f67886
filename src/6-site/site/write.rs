//! The write stage: beside the pages the render stage wrote, each
//! campaign's manifest page, the single file, audit.json and SHA256SUMS,
//! then the site's root files and root SHA256SUMS. Every byte goes
//! through the sink.

use super::nav::base_context;
use super::pages::Rendered;
use crate::campaign::{self, Campaign};
use crate::copies::{self, Copies};
use crate::error::InputError;
use crate::error::Result;
use crate::evidence::Evidence;
use crate::layout;
use crate::manifest;
use crate::public::{self, Public};
use crate::redact::scan;
use crate::render::Theme;
use crate::sink::Sink;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

#[derive(Serialize)]
struct ManifestRow<'a> {
    path: &'a str,
    href: String,
    bytes: String,
    sha256: &'a str,
    verdict: &'static str,
    redactions: String,
    /// The copy differs from the verified original.
    redacted: bool,
    /// The keyed commitment to the original, when a key was given.
    sealed: Option<&'a str>,
    unscanned: bool,
    /// Row id in the single file's file list.
    anchor: String,
}

/// Rows of the manifest page rendered at once (and, in the preview, kept
/// and looked up together): a save that changes one file's row renders
/// this many again. Part of the page's bytes: each chunk ends where the
/// template ends (with a line break).
const ROWS_CHUNK: usize = 512;

/// What a chunk of the manifest page's rows is rendered from, as the
/// preview's [`RowsCache`] keeps it: the theme, and every field of every
/// row (each string told from the next by its length).
fn rows_key(theme: &str, rows: &[ManifestRow]) -> String {
    use crate::hash::update_text as text;
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for row in rows {
        // Every field, so a field added to the row cannot be left out.
        let ManifestRow {
            path,
            href,
            bytes,
            sha256,
            verdict,
            redactions,
            redacted,
            sealed,
            unscanned,
            anchor,
        } = row;
        for s in [*path, href, bytes, *sha256, *verdict, redactions, anchor] {
            text(&mut h, s);
        }
        h.update([u8::from(*redacted), u8::from(*unscanned)]);
        match sealed {
            Some(s) => {
                h.update([1]);
                text(&mut h, s);
            }
            None => h.update([0]),
        }
    }
    format!("{theme}\0{}", crate::hash::hex(&h.finalize()))
}

/// Everything the write stage reads.
pub(super) struct Site<'a> {
    pub(crate) campaigns: &'a [Campaign],
    pub(crate) evidences: &'a [Evidence],
    pub(crate) publics: &'a [Public],
    pub(crate) copies: &'a [Copies],
    pub(crate) theme: &'a Theme,
    pub(crate) single_file: bool,
    /// OUT, whose files a preview build that writes only changes keeps.
    pub(crate) out: &'a Path,
    /// The preview's manifest rows as the last build rendered them
    /// (`None`: a one-shot build).
    pub(crate) rows: Option<&'a RowsCache>,
}

/// The manifest page's rows as the preview's last build rendered them, a
/// chunk of rows at a time, by the chunk's data and the theme: a save that
/// changes one file's row renders one chunk again, not every row.
#[derive(Default)]
pub(crate) struct RowsCache(std::sync::Mutex<HashMap<String, HashMap<String, Arc<str>>>>);

impl RowsCache {
    fn get(&self, id: &str, key: &str) -> Option<Arc<str>> {
        let kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.get(id)?.get(key).cloned()
    }

    /// Keep `used`, this build's chunks of campaign `id`, and only those.
    fn keep(&self, id: &str, used: HashMap<String, Arc<str>>) {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.insert(id.to_string(), used);
    }
}

/// Files the rescan treats apart (paths relative to the staging folder).
#[derive(Default)]
pub(super) struct Written {
    /// Binaries and archives published as they are (scanned as inputs).
    pub(crate) unscanned: BTreeSet<String>,
    /// Exact copies of inputs the same detector found clean: only their
    /// names are scanned again.
    pub(crate) verbatim: BTreeSet<String>,
    /// Generated files, and copies of large text files, scanned as they
    /// were written, with what was found.
    pub(crate) prescanned: BTreeMap<String, scan::Scanned>,
}

/// What the preview's write stage leaves to its last part
/// ([`Site::write_last`]): the files that list or describe all the others.
pub(super) struct Last {
    /// Each campaign as rendered, with its single file's name and hash.
    campaigns: Vec<(Rendered, Option<(String, String)>)>,
    /// What the root SHA256SUMS lists so far (all but the campaigns'
    /// SHA256SUMS).
    root: Sums,
}

/// What the site's index shows of a campaign.
fn cite(rendered: &Rendered) -> super::index::Cited {
    super::index::Cited {
        headline: rendered.headline.clone(),
        digest: rendered.digest.clone(),
        header: rendered.header.clone(),
    }
}

/// Published path -> SHA-256: what a SHA256SUMS lists.
type Sums = BTreeMap<String, String>;

fn sums_text(sums: &Sums) -> String {
    sums.iter()
        .map(|(p, h)| manifest::sums_line(h, p))
        .collect()
}

impl Site<'_> {
    /// Write the whole site into `staging`, each campaign's files in turn
    /// (so only one campaign's rendering is held at a time).
    /// The root SHA256SUMS covers every file outside the campaign folders
    /// and each campaign's SHA256SUMS, so `exhibit verify` (or
    /// `sha256sum -c` at the root) checks every file the site serves.
    pub(super) fn write(&self, sink: &Sink, pages: Vec<Rendered>) -> Result<Written> {
        let mut written = Written::default();
        let mut cited = Vec::new();
        let mut sums = Sums::new();
        for (i, mut rendered) in pages.into_iter().enumerate() {
            cited.push(cite(&rendered));
            let single = self.campaign_first(sink, i, &mut rendered, &mut written)?;
            let sha = self.campaign_last(sink, i, rendered, single)?;
            sums.insert(format!("{}/{}", self.publics[i].meta.id, layout::SUMS), sha);
        }
        sums.extend(self.root_files(sink, &cited)?);
        sink.write(layout::SUMS, sums_text(&sums).as_bytes())?;
        Ok(written)
    }

    /// The preview's write stage, first part: what a reader's page needs
    /// beside the pages (each campaign's single file, the site's index,
    /// feed and assets), and every check of the campaign's names. What is
    /// left ([`crate::layout::written_last`]) lists or describes these.
    pub(super) fn write_first(&self, sink: &Sink, pages: Vec<Rendered>) -> Result<(Written, Last)> {
        let mut written = Written::default();
        let mut cited = Vec::new();
        let mut campaigns = Vec::new();
        for (i, mut rendered) in pages.into_iter().enumerate() {
            cited.push(cite(&rendered));
            let single = self.campaign_first(sink, i, &mut rendered, &mut written)?;
            campaigns.push((rendered, single));
        }
        let root = self.root_files(sink, &cited)?;
        Ok((written, Last { campaigns, root }))
    }

    /// The preview's write stage, last part: each campaign's manifest
    /// page, audit.json and SHA256SUMS, then the root SHA256SUMS.
    pub(super) fn write_last(&self, sink: &Sink, last: Last) -> Result<()> {
        let Last {
            campaigns,
            mut root,
        } = last;
        for (i, (rendered, single)) in campaigns.into_iter().enumerate() {
            let sha = self.campaign_last(sink, i, rendered, single)?;
            root.insert(format!("{}/{}", self.publics[i].meta.id, layout::SUMS), sha);
        }
        sink.write(layout::SUMS, sums_text(&root).as_bytes())?;
        Ok(())
    }

    /// The site's own files (marker, index, feed, theme assets), written;
    /// what the root SHA256SUMS lists of them.
    fn root_files(&self, sink: &Sink, cited: &[super::index::Cited]) -> Result<Sums> {
        let (index, feed) = super::index::render(self.publics, self.evidences, cited, self.theme)?;
        let mut root = Sums::new();
        let mut write = |rel: &str, bytes: &[u8]| -> Result<()> {
            let (sha, _) = sink.write(rel, bytes)?;
            root.insert(rel.to_string(), sha);
            Ok(())
        };
        write(layout::MARKER, layout::MARKER_TEXT)?;
        write(layout::INDEX_PAGE, &index)?;
        write(layout::FEED, &feed)?;
        for a in &self.theme.assets {
            write(&a.path, &a.bytes)?;
        }
        Ok(root)
    }

    /// Campaign `i`'s files written first: its single file (its name and
    /// hash returned; the rendered pages it was made from are let go); its
    /// pages and copies told to the rescan.
    fn campaign_first(
        &self,
        sink: &Sink,
        i: usize,
        rendered: &mut Rendered,
        written: &mut Written,
    ) -> Result<Option<(String, String)>> {
        let id = self.publics[i].meta.id.as_str();
        let mut taken = self.names_taken(i, rendered)?;
        // The rescan reads only what is staged: in the preview, what a
        // save changed, so only that is looked up (not every page).
        let staged = sink.staged_in(id);
        let wanted = |rel: &str| staged.as_ref().is_none_or(|s| s.contains(rel));
        for em in rendered.emitted.iter().filter(|em| wanted(&em.rel)) {
            let rel = format!("{id}/{}", em.rel);
            written.prescanned.insert(rel, em.scanned.clone());
        }
        self.mark_copies(i, written, &wanted);
        if !self.single_file {
            return Ok(None);
        }
        let name = self.single_file_name(i, &mut taken)?;
        let bytes = self.single_file_page(i, rendered, sink)?;
        rendered.pages = Vec::new();
        let (sha, _) = sink.write(&format!("{id}/{name}"), &bytes)?;
        Ok(Some((name, sha)))
    }

    /// Campaign `i`'s manifest page, audit.json and SHA256SUMS (`single`:
    /// its single file's name and hash); returns the SHA-256 of its
    /// SHA256SUMS.
    fn campaign_last(
        &self,
        sink: &Sink,
        i: usize,
        rendered: Rendered,
        single: Option<(String, String)>,
    ) -> Result<String> {
        let id = self.publics[i].meta.id.as_str();
        let mut sums: Sums = single.into_iter().collect();
        for em in &rendered.emitted {
            sums.insert(em.rel.clone(), em.sha256.clone());
        }
        for f in &self.copies[i].files {
            sums.insert(f.path.clone(), f.public_sha256().to_string());
        }
        // audit.json needs nothing of the campaign's other files. It is the
        // largest file a campaign adds, and hashing it is most of a save's
        // write stage: it is written beside the other files. (A one-shot
        // build used to write it after them, for peak memory; that peak is
        // now reached while the pages are rendered, and side by side the
        // write stage takes 14.4 -> 11.9 ms at 1,000 pages and 152 -> 131
        // ms at 10,000.) The other files' error is the one reported first.
        let audit = || -> Result<String> { Ok(self.write_audit(sink, i, &rendered)?.0) };
        let others = || self.manifest_listed(sink, i, &rendered, sums);
        let (audit, others) = rayon::join(audit, others);
        let (mut sums, around) = others?;
        let sha = audit?;
        let line = manifest::sums_line(&sha, layout::AUDIT);
        sums.insert(layout::AUDIT.to_string(), sha);
        let text = match around {
            Some([before, after]) => [before, line, after].concat(),
            None => sums_text(&sums),
        };
        debug_assert_eq!(text, sums_text(&sums));
        // The pages show the digest of what the render stage knew: it must
        // be the one this SHA256SUMS, as written, gives by the documented
        // rule (the preview's pages show none).
        let shown = rendered.digest.as_str();
        if shown != super::digest::IN_PREVIEW && super::digest::of_sums_text(&text) != shown {
            crate::error::bail!("internal error: the publication digest of `{id}` shown on its pages is not the one its SHA256SUMS gives");
        }
        let (sums_sha, _) = sink.write(&format!("{id}/{}", layout::SUMS), text.as_bytes())?;
        // The campaign as rendered (its figures' records, every page's
        // files) is let go on the pool, off the write stage's way.
        crate::sink::drop_apart(rendered);
        Ok(sums_sha)
    }

    /// Campaign `i`'s manifest page written and listed in `sums`, which
    /// is handed back. The preview also gets SHA256SUMS's lines before
    /// audit.json's and after it, made while audit.json is hashed, so only
    /// its line is added once it is (a one-shot build makes them after:
    /// holding them all through audit.json's writing raised its peak
    /// memory).
    fn manifest_listed(
        &self,
        sink: &Sink,
        i: usize,
        rendered: &Rendered,
        mut sums: Sums,
    ) -> Result<(Sums, Option<[String; 2]>)> {
        let id = self.publics[i].meta.id.as_str();
        let page = self.manifest_page(i, rendered)?;
        let (sha, _) = sink.write(&format!("{id}/{}", layout::MANIFEST_PAGE), &page)?;
        sums.insert(layout::MANIFEST_PAGE.to_string(), sha);
        use std::ops::Bound::{Excluded, Unbounded};
        let lines = |range: (std::ops::Bound<&str>, std::ops::Bound<&str>)| -> String {
            let listed = sums.range::<str, _>(range);
            listed.map(|(p, h)| manifest::sums_line(h, p)).collect()
        };
        let around = self.rows.map(|_| {
            [
                lines((Unbounded, Excluded(layout::AUDIT))),
                lines((Excluded(layout::AUDIT), Unbounded)),
            ]
        });
        Ok((sums, around))
    }

    /// Campaign `i`'s audit.json written: its head and tail around the
    /// typed figures' lines. Returns its SHA-256 and whether it was written.
    fn write_audit(&self, sink: &Sink, i: usize, rendered: &Rendered) -> Result<(String, bool)> {
        let shown = super::audit::Shown {
            blocks: &rendered.blocks,
            ledger: &rendered.ledger,
            checks: &rendered.checks,
            figures: &rendered.figures,
            digest: &rendered.digest,
            header: &rendered.header,
        };
        let [head, tail] = &self.audit(i, shown)?;
        let parts = |write: &mut dyn FnMut(&[u8]) -> Result<()>| {
            write(head)?;
            rendered.figures.write_each(sink, write)?;
            write(tail)
        };
        sink.write_parts(
            &format!("{id}/{}", layout::AUDIT, id = self.publics[i].meta.id),
            &parts,
        )
    }

    /// The names the campaign's folder holds, as a case-insensitive disk
    /// compares them (`Audit.json` is `audit.json` there): a copy that
    /// would take a generated file's name, or another copy's, is refused.
    fn names_taken(&self, i: usize, rendered: &Rendered) -> Result<BTreeSet<String>> {
        let c = &self.campaigns[i];
        let mut taken: BTreeSet<String> = rendered
            .emitted
            .iter()
            .map(|em| campaign::fold_name(&em.rel).into_owned())
            .collect();
        taken.extend(
            [layout::MANIFEST_PAGE, layout::AUDIT, layout::SUMS]
                .map(|n| campaign::fold_name(n).into_owned()),
        );
        for f in &self.copies[i].files {
            if !taken.insert(campaign::fold_name(&f.path).into_owned()) {
                return Err(InputError::new(&c.path(&f.original), 0, 0, format!("`{}` would collide with another file of the published campaign; rename this file", f.path)).into());
            }
        }
        Ok(taken)
    }

    /// `<id>.html`, unless a page or file of the campaign has that name.
    fn single_file_name(&self, i: usize, taken: &mut BTreeSet<String>) -> Result<String> {
        let name = format!("{}.html", self.publics[i].meta.id);
        if !taken.insert(campaign::fold_name(&name).into_owned()) {
            let at = self.campaigns[i].path(campaign::META_NAME);
            return Err(InputError::new(&at, 0, 0, format!("the single file `{name}` would replace a page or file of the campaign; rename that page")).into());
        }
        Ok(name)
    }

    /// Tell the rescan which copies (those `wanted`) it may skip or read
    /// by name only.
    fn mark_copies(&self, i: usize, written: &mut Written, wanted: &dyn Fn(&str) -> bool) {
        for f in self.copies[i].files.iter().filter(|f| wanted(&f.path)) {
            let rel = format!("{}/{}", self.publics[i].meta.id, f.path);
            if let Some(scanned) = &f.copied.scanned {
                // Scanned as written, by the copy stage's detector.
                written.prescanned.insert(rel, scanned.clone());
                continue;
            }
            match f.mode {
                public::Mode::Binary => written.unscanned.insert(rel),
                public::Mode::Verbatim => written.verbatim.insert(rel),
                public::Mode::Redact => false,
            };
        }
    }

    fn manifest_rows(&self, i: usize) -> Vec<ManifestRow<'_>> {
        let (e, p, copies) = (&self.evidences[i], &self.publics[i], &self.copies[i]);
        let thousands = crate::expr::Format::parse(",").unwrap_or_default();
        e.files
            .iter()
            .zip(copies.evidence_files())
            .enumerate()
            .map(|(n, (f, k))| ManifestRow {
                path: p.name(&f.path),
                href: k.path.clone(),
                bytes: thousands.apply(k.public_bytes() as f64),
                sha256: k.public_sha256(),
                verdict: f.verdict.as_str(),
                redactions: crate::redact::describe(&k.copied.redactions),
                redacted: k.redacted(),
                sealed: k.sealed.as_ref().map(|s| s.hmac_sha256.as_str()),
                unscanned: k.copied.binary,
                anchor: format!("file-{}", n + 1),
            })
            .collect()
    }

    /// The context the manifest page and the single file share.
    fn files_context(&self, i: usize, r: &Rendered, title: &str, current: &str) -> tera::Context {
        let e = &self.evidences[i];
        let copied = self.copies[i].evidence_files();
        let redacted: usize = copied
            .iter()
            .flat_map(|k| k.copied.redactions.values())
            .sum();
        let mut ctx = base_context(
            &self.publics[i],
            &r.header,
            current,
            title,
            self.theme,
            self.single_file,
        );
        ctx.insert("summary", &e.summary());
        ctx.insert("all_ok", &e.all_ok());
        ctx.insert("redacted", &redacted);
        ctx.insert(
            "redacted_files",
            &copied.iter().filter(|k| k.redacted()).count(),
        );
        ctx.insert("manifest", &self.manifest_facts(i));
        ctx.insert("digest", &r.digest);
        ctx
    }

    /// The published manifest: its name, link, and hash as published.
    fn manifest_facts(&self, i: usize) -> serde_json::Value {
        let m = self.copies[i].manifest();
        serde_json::json!({
            "name": m.map_or("", |m| m.path.as_str()),
            "href": m.map_or("", |m| m.path.as_str()),
            "sha256": m.map_or("", |m| m.public_sha256()),
            "rewritten": m.is_some_and(copies::Published::redacted),
        })
    }

    fn manifest_page(&self, i: usize, r: &Rendered) -> Result<Vec<u8>> {
        let mut ctx = self.files_context(i, r, "Manifest", layout::MANIFEST_PAGE);
        let id = self.publics[i].meta.id.as_str();
        // Rows are rendered in chunks on every core: a campaign may list
        // tens of thousands of files.
        let rows = self.manifest_rows(i);
        let chunks: Vec<Result<(Option<String>, Arc<str>)>> = rows
            .par_chunks(ROWS_CHUNK)
            .map(|chunk| {
                let key = self.rows.map(|_| rows_key(&self.theme.fingerprint, chunk));
                if let Some(kept) = key.as_deref().and_then(|k| self.rows?.get(id, k)) {
                    return Ok((key, kept));
                }
                let mut c = tera::Context::new();
                c.insert("files", chunk);
                let html = self.theme.render("manifest_rows.html", &c)?;
                Ok((key, html.into()))
            })
            .collect();
        let chunks = chunks.into_iter().collect::<Result<Vec<_>>>()?;
        let rows: String = chunks.iter().map(|(_, html)| &**html).collect();
        if let Some(cache) = self.rows {
            let used = chunks.into_iter().filter_map(|(k, html)| Some((k?, html)));
            cache.keep(id, used.collect());
        }
        ctx.insert("rows", &rows);
        Ok(self.theme.render("manifest.html", &ctx)?.into_bytes())
    }

    /// The one-file copy: every page and the file list (each file in it as
    /// a `data:` URL, up to [`crate::single::EMBED_LIMIT`]), with the
    /// stylesheet inline. Images and files are read back from the
    /// published copies.
    fn single_file_page(&self, i: usize, rendered: &Rendered, sink: &Sink) -> Result<Vec<u8>> {
        let id = &self.publics[i].meta.id;
        // A published copy is staged, or (preview) served unchanged.
        let (staged, served) = (sink.staging.join(id), self.out.join(id));
        let rows = self.manifest_rows(i);
        let listed: Vec<crate::single::Listed> = rows
            .iter()
            .map(|r| crate::single::Listed {
                href: &r.href,
                anchor: r.anchor.clone(),
            })
            .collect();
        let published: BTreeSet<&str> = rows.iter().map(|r| r.href.as_str()).collect();
        let read = |path: &str| -> Option<Vec<u8>> {
            published
                .contains(path)
                .then(|| {
                    std::fs::read(staged.join(path))
                        .or_else(|_| std::fs::read(served.join(path)))
                        .ok()
                })
                .flatten()
        };
        let sizes: Vec<(&str, u64)> = self.copies[i]
            .evidence_files()
            .iter()
            .map(|k| (k.path.as_str(), k.public_bytes()))
            .collect();
        let (embedded, left_out) = crate::single::embed(&sizes, &read);
        let files: Vec<SingleRow> = rows
            .iter()
            .zip(embedded)
            .map(|(row, embedded)| SingleRow { row, embedded })
            .collect();
        let linker = crate::single::Linker::new(&rendered.pages, &listed);
        let sections = linker.sections(&rendered.pages, &read);
        let mut ctx = self.files_context(i, rendered, "Offline copy", "");
        ctx.insert("files", &files);
        ctx.insert("left_out", &left_out);
        let limit = format!("{} MiB", crate::single::EMBED_LIMIT >> 20);
        ctx.insert("embed_limit", &limit);
        ctx.insert("css", self.theme.css_text());
        ctx.insert("sections", &sections);
        ctx.insert("count", &rendered.ledger.len());
        ctx.insert("ledger_href", linker.ledger_href());
        Ok(self.theme.render("single.html", &ctx)?.into_bytes())
    }
}

/// A row of the single file's file list: the manifest row and, when it
/// fits, the file itself.
#[derive(Serialize)]
struct SingleRow<'a> {
    #[serde(flatten)]
    row: &'a ManifestRow<'a>,
    embedded: Option<crate::single::Embedded>,
}
