//! Command-line interface: clap's raw arguments, checked once, dispatched to
//! the pipeline. Prints results; errors go back to `main`.

use crate::error::EvidenceFailed;
use crate::error::{Error, Result};
use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Parser, Debug)]
#[command(
    name = "exhibit",
    version,
    about = "Turn benchmark-campaign artifacts into a verified static publication"
)]
pub struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Verify every campaign under ROOT and render the site into OUT
    Build {
        /// A campaign folder, or a folder of campaigns [default: sample-artifacts]
        root: Option<PathBuf>,
        /// Output folder; built beside it and swapped in when everything passed
        #[arg(short, long, default_value = "site")]
        out: PathBuf,
        /// A folder whose templates/ and assets/ override the built-in theme
        #[arg(long)]
        theme: Option<PathBuf>,
        /// Also write OUT/<id>/<id>.html: the whole campaign in one self-contained file
        #[arg(long)]
        single_file: bool,
        /// Publisher key (outside the campaign): each redacted copy gets a keyed
        /// commitment to its sealed original [env: EXHIBIT_KEY_FILE, or the key in EXHIBIT_KEY]
        #[arg(long, value_name = "FILE")]
        key_file: Option<PathBuf>,
        /// Refuse to build unless the manifest has this SHA-256 (`ID=SHA256`
        /// for each campaign of a root of several); repeatable
        #[arg(long, value_name = "[ID=]SHA256")]
        expect: Vec<crate::verify::Pin>,
        /// A typed figure in a page that matches no value of the data fails
        /// the build (exit 1) instead of warning
        #[arg(long)]
        strict: bool,
    },
    /// Check every file of a campaign (or a published site) against its manifest
    Verify {
        path: PathBuf,
        /// Machine-readable report on stdout
        #[arg(long)]
        json: bool,
        /// With a published campaign: the sealed campaign it was built from;
        /// every copy is checked against its original (needs the key)
        #[arg(long, value_name = "CAMPAIGN")]
        sealed: Option<PathBuf>,
        /// The publisher key the site was built with [env: EXHIBIT_KEY_FILE, or EXHIBIT_KEY]
        #[arg(long, value_name = "FILE")]
        key_file: Option<PathBuf>,
        /// Fail unless the manifest has this SHA-256 (`ID=SHA256` for each
        /// campaign of a site of several); repeatable
        #[arg(long, value_name = "[ID=]SHA256")]
        expect: Vec<crate::verify::Pin>,
    },
    /// Scan a folder or file for private values; exit 1 if any is found
    Scan {
        #[arg(required_unless_present = "print_pattern")]
        path: Option<PathBuf>,
        /// Machine-readable report on stdout
        #[arg(long)]
        json: bool,
        /// Print the built-in pattern (for comparing with other tools) and exit
        #[arg(long, hide = true)]
        print_pattern: bool,
    },
    /// Build into a private preview folder, serve it, rebuild on change
    Serve {
        /// A campaign folder, or a folder of campaigns [default: sample-artifacts]
        root: Option<PathBuf>,
        /// A folder whose templates/ and assets/ override the built-in theme
        #[arg(long)]
        theme: Option<PathBuf>,
        /// Port to try first; the next free one is taken if it is busy
        #[arg(long, default_value_t = 8000)]
        port: u16,
        /// Address to listen on; anything but loopback shows unpublished material to the network
        #[arg(long, default_value = "127.0.0.1")]
        bind: std::net::IpAddr,
        /// Open the preview in the default browser
        #[arg(long)]
        open: bool,
    },
    /// Start a campaign in PATH (new or empty) that builds as it is
    New { path: PathBuf },
    /// Write manifest.json for every file of a campaign
    Seal {
        campaign: PathBuf,
        /// Rewrite an existing manifest that differs from the files on disk
        #[arg(long)]
        update: bool,
    },
}

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Build {
            root,
            out,
            theme,
            single_file,
            key_file,
            expect,
            strict,
        } => {
            let root = default_root(root, "build")?;
            let key = crate::commit::Key::load(key_file.as_deref(), &[&root])?;
            build(crate::site::BuildOptions {
                root,
                out,
                theme,
                preview: false,
                single_file,
                key,
                expect,
                strict,
            })
        }
        Command::Verify {
            path,
            json,
            expect,
            sealed,
            key_file,
        } => verify(&path, json, &expect, sealed.as_deref(), key_file.as_deref()),
        Command::Scan {
            path,
            json,
            print_pattern,
        } => scan(path, json, print_pattern),
        Command::Serve {
            root,
            theme,
            port,
            bind,
            open,
        } => crate::serve::serve(&crate::serve::ServeOptions {
            root: default_root(root, "serve")?,
            theme,
            bind,
            port,
            open,
        }),
        Command::New { path } => {
            let report = crate::new::new_campaign(&path)?;
            writeln!(std::io::stdout(), "{report}")?;
            Ok(())
        }
        Command::Seal { campaign, update } => {
            let report = crate::seal::seal(&campaign, update)?;
            writeln!(std::io::stdout(), "{}", report.message)?;
            Ok(())
        }
    }
}

/// `exhibit build`: the site, and one line saying what was built.
fn build(opts: crate::site::BuildOptions) -> Result<()> {
    let report = crate::site::build(&opts)?;
    writeln!(
        std::io::stdout(),
        "built {} campaign{} ({} pages, {} files verified) into {}",
        report.campaigns,
        if report.campaigns == 1 { "" } else { "s" },
        report.pages,
        report.files,
        opts.out.display()
    )?;
    Ok(())
}

/// `exhibit verify`: every campaign's verdicts printed (text or JSON);
/// exit 1 when any file failed.
fn verify(
    path: &Path,
    json: bool,
    expect: &[crate::verify::Pin],
    sealed: Option<&Path>,
    key_file: Option<&Path>,
) -> Result<()> {
    let all = match sealed {
        Some(sealed) => {
            let key = crate::commit::Key::load(key_file, &[sealed])?
                .ok_or_else(|| Error::Usage("`--sealed` checks keyed commitments: give the key with `--key-file FILE` (or EXHIBIT_KEY_FILE / EXHIBIT_KEY)".into()))?;
            vec![crate::verify::against_sealed(path, sealed, &key)?]
        }
        None => crate::verify::verify(path, expect)?,
    };
    let text = if json {
        crate::verify::to_json(&all)?
    } else {
        crate::verify::to_text(&all)
    };
    // The verdict outranks the pipe: a failed verification read
    // through `| head` still exits 1.
    let printed = emit(&text);
    let ok = all.iter().all(|e| e.all_ok());
    let summary: Vec<String> = if ok {
        Vec::new()
    } else {
        all.iter().map(|e| e.summary()).collect()
    };
    // Freeing a verdict per file (10,000 of them: 2.5 ms) is off the
    // way out, as the build lets go of what it read.
    crate::sink::drop_apart((all, text));
    if ok {
        return Ok(printed?);
    }
    Err(EvidenceFailed {
        report: format!("verification failed: {}", summary.join("; ")),
    }
    .into())
}

/// `exhibit scan`: the findings printed (text or JSON); exit 1 when a
/// private value was found or content could not be scanned.
fn scan(path: Option<PathBuf>, json: bool, print_pattern: bool) -> Result<()> {
    if print_pattern {
        writeln!(std::io::stdout(), "{}", crate::redact::builtin_pattern())?;
        return Ok(());
    }
    let path = path.expect("clap requires PATH without --print-pattern");
    let report = crate::redact::scan::scan_command(&path)?;
    let text = if json {
        report.to_json()?
    } else {
        report.to_text()
    };
    let printed = emit(&text);
    if report.clean() {
        return Ok(printed?);
    }
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let (found, skipped) = (report.findings.len(), report.skipped.len());
    let mut what = Vec::new();
    if found > 0 {
        what.push(format!("{found} private value{} found", plural(found)));
    }
    // Content not scanned is never reported clean.
    if skipped > 0 {
        what.push(format!("{skipped} part{} not scanned", plural(skipped)));
    }
    Err(EvidenceFailed {
        report: format!("{} in `{}`", what.join(", "), path.display()),
    }
    .into())
}

/// ROOT when none is given: the sample campaign beside a clone of the
/// repository. Anywhere else, say what to type rather than fail on a
/// folder the user never named.
fn default_root(root: Option<PathBuf>, command: &str) -> Result<PathBuf> {
    if let Some(root) = root {
        return Ok(root);
    }
    let sample = PathBuf::from("sample-artifacts");
    if sample.is_dir() {
        return Ok(sample);
    }
    if std::path::Path::new("campaign.json").is_file() {
        return Err(Error::Usage(format!(
            "no ROOT given: this folder is a campaign, so name it and an output outside it: `exhibit {command} . -o ../site`"
        )));
    }
    // A campaign one folder down (`exhibit new camp`, then `exhibit build`):
    // name it, rather than only say there is none here.
    let mut below: Vec<String> = std::fs::read_dir(".")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join("campaign.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    below.sort();
    if let Some(first) = below.first() {
        return Err(Error::Usage(format!(
            "no ROOT given and no campaign.json here; `{first}` holds a campaign: `exhibit {command} {first}`"
        )));
    }
    Err(Error::Usage(format!(
        "no ROOT given and no campaign here (no campaign.json): name a campaign folder, `exhibit {command} PATH`, or start one with `exhibit new PATH`"
    )))
}

/// Write a command's report to stdout. A reader that stopped early (`| head`)
/// makes this a BrokenPipe error, which main ends quietly with exit 0.
fn emit(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}
