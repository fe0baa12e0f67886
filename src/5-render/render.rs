//! The theme: tera templates and static assets, built in with `include_str!`
//! and listed in one table. A `--theme DIR` holding files at the same
//! relative paths overrides any of them. Markdown never passes through tera:
//! rendered page bodies are handed to the templates as finished HTML.

use crate::error::{Context, Result};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use tera::Tera;

/// Every built-in theme file: (path inside a theme folder, contents).
const BUILTIN: &[(&str, &str)] = &[
    (
        "templates/base.html",
        include_str!("../../templates/base.html"),
    ),
    (
        "templates/campaign_header.html",
        include_str!("../../templates/campaign_header.html"),
    ),
    (
        "templates/campaign_facts.html",
        include_str!("../../templates/campaign_facts.html"),
    ),
    (
        "templates/page.html",
        include_str!("../../templates/page.html"),
    ),
    (
        "templates/manifest.html",
        include_str!("../../templates/manifest.html"),
    ),
    (
        "templates/manifest_rows.html",
        include_str!("../../templates/manifest_rows.html"),
    ),
    (
        "templates/ledger.html",
        include_str!("../../templates/ledger.html"),
    ),
    (
        "templates/index.html",
        include_str!("../../templates/index.html"),
    ),
    (
        "templates/print_margins.html",
        include_str!("../../templates/print_margins.html"),
    ),
    (
        "templates/cite.html",
        include_str!("../../templates/cite.html"),
    ),
    (
        "templates/feed.xml",
        include_str!("../../templates/feed.xml"),
    ),
    (
        "templates/single.html",
        include_str!("../../templates/single.html"),
    ),
    ("assets/style.css", include_str!("../../assets/style.css")),
];

pub(crate) const GENERATOR: &str = concat!("exhibit ", env!("CARGO_PKG_VERSION"));

/// A static file of the site, under a fingerprinted name.
pub(crate) struct Asset {
    /// e.g. `assets/style.0c1d2e3f4a.css`
    pub(crate) path: String,
    pub(crate) bytes: Vec<u8>,
}

pub(crate) struct Theme {
    tera: Tera,
    pub(crate) assets: Vec<Asset>,
    /// Site-relative path of the stylesheet.
    pub(crate) css: String,
    /// Hash of every template and asset: output made with another theme
    /// is never reused.
    pub(crate) fingerprint: String,
}

impl Theme {
    /// The stylesheet's text, for pages that carry it inline.
    pub(crate) fn css_text(&self) -> &str {
        self.assets
            .iter()
            .find(|a| a.path == self.css)
            .and_then(|a| std::str::from_utf8(&a.bytes).ok())
            .unwrap_or("")
    }
}

impl Theme {
    pub(crate) fn load(dir: Option<&Path>) -> Result<Theme> {
        Theme::compile(Sources::read(dir)?)
    }

    /// [`Theme::load`], or the theme `kept` holds when its templates and
    /// assets are the same bytes (the preview: parsing the templates is
    /// most of a save's load stage). What is loaded is kept.
    pub(crate) fn load_kept(dir: Option<&Path>, kept: &KeptTheme) -> Result<Arc<Theme>> {
        let sources = Sources::read(dir)?;
        let mut kept = kept.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(theme) = kept
            .as_ref()
            .filter(|t| t.fingerprint == sources.fingerprint)
        {
            return Ok(Arc::clone(theme));
        }
        let theme = Arc::new(Theme::compile(sources)?);
        *kept = Some(Arc::clone(&theme));
        Ok(theme)
    }

    fn compile(sources: Sources) -> Result<Theme> {
        let mut tera = Tera::default();
        // tera's own escaper also rewrites `/`, which makes every path unreadable.
        tera.set_escape_fn(crate::html::escape);
        let mut assets = Vec::new();
        let mut templates = Vec::new();
        for (name, text) in sources.files {
            if let Some(t) = name.strip_prefix("templates/") {
                templates.push((t.to_string(), text));
            } else {
                assets.push(fingerprint(name, text.into_bytes()));
            }
        }
        tera.add_raw_templates(templates)
            .map_err(|e| crate::error::Error::Invalid(tera_chain(&e)))
            .context("a theme template does not compile")?;
        let css = assets
            .iter()
            .find(|a| a.path.starts_with("assets/style."))
            .map(|a| a.path.clone())
            .unwrap_or_default();
        Ok(Theme {
            tera,
            assets,
            css,
            fingerprint: sources.fingerprint,
        })
    }

    pub(crate) fn render(&self, template: &str, ctx: &tera::Context) -> Result<String> {
        self.tera.render(template, ctx).map_err(|e| {
            crate::error::Error::Invalid(format!(
                "template `{template}` failed: {}",
                tera_chain(&e)
            ))
        })
    }
}

/// The theme the load stage hands on: compiled, or the built-in one still
/// compiling on the build's thread pool while the stages before the render
/// stage run (it took 7 ms alone on the build's thread, a fifth of a small
/// campaign's load and verify). [`PendingTheme::get`] waits for it.
pub(crate) struct PendingTheme(Arc<OnceLock<Result<Arc<Theme>>>>);

impl PendingTheme {
    pub(crate) fn ready(theme: Arc<Theme>) -> Self {
        PendingTheme(Arc::new(OnceLock::from(Ok(theme))))
    }

    /// The built-in theme, its compiling begun on the pool.
    pub(crate) fn builtin() -> Self {
        let cell = Arc::new(OnceLock::new());
        let compiling = Arc::clone(&cell);
        rayon::spawn(move || {
            compiling.get_or_init(compile_builtin);
        });
        PendingTheme(cell)
    }

    /// The theme, once compiled (here, if the pool has not begun it).
    pub(crate) fn get(&self) -> Result<Arc<Theme>> {
        match self.0.get_or_init(compile_builtin) {
            Ok(theme) => Ok(Arc::clone(theme)),
            Err(e) => Err(crate::error::Error::foreign(e)),
        }
    }
}

fn compile_builtin() -> Result<Arc<Theme>> {
    Theme::load(None).map(Arc::new)
}

/// The preview's last theme, for [`Theme::load_kept`].
#[derive(Default)]
pub(crate) struct KeptTheme(Mutex<Option<Arc<Theme>>>);

/// A theme's files as read (the theme folder's, else the built-in ones),
/// and the hash of them all.
struct Sources {
    files: Vec<(&'static str, String)>,
    fingerprint: String,
}

impl Sources {
    fn read(dir: Option<&Path>) -> Result<Sources> {
        let mut files = Vec::with_capacity(BUILTIN.len());
        let mut all = String::new();
        for (name, builtin) in BUILTIN {
            let text = match dir.map(|d| d.join(name)).filter(|p| p.is_file()) {
                Some(p) => crate::fsx::read_to_string(&p)?,
                None => builtin.to_string(),
            };
            all.push_str(name);
            all.push('\0');
            all.push_str(&text);
            all.push('\0');
            files.push((*name, text));
        }
        Ok(Sources {
            files,
            fingerprint: crate::hash::sha256_bytes(all.as_bytes()),
        })
    }
}

/// `assets/style.css` -> `assets/style.<10 hex>.css`, so caches never serve
/// a stale stylesheet.
fn fingerprint(name: &str, bytes: Vec<u8>) -> Asset {
    let hash = crate::hash::sha256_bytes(&bytes);
    let path = match name.rsplit_once('.') {
        Some((stem, ext)) => format!("{stem}.{}.{ext}", &hash[..10]),
        None => format!("{name}.{}", &hash[..10]),
    };
    Asset { path, bytes }
}

/// tera nests the useful message in its source chain.
fn tera_chain(e: &tera::Error) -> String {
    let mut msg = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        src = s.source();
    }
    msg
}
