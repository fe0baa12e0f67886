//! `exhibit serve`: build the campaigns into a private preview folder,
//! serve it on 127.0.0.1, rebuild when a campaign, template or asset
//! changes, and tell open pages to reload. A failed rebuild keeps the last
//! good site and shows the error over every page; the server never stops
//! on a bad edit. It stays private: only its own Host is answered, its
//! threads are fixed in number, and banner and overlay are redacted.

mod http;
mod net;
mod watch;

use crate::error::{Context, Result};
use crate::layout;
use crate::site::{self, BuildOptions};
use std::net::{IpAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

pub(crate) struct ServeOptions {
    pub(crate) root: PathBuf,
    pub(crate) theme: Option<PathBuf>,
    pub(crate) bind: IpAddr,
    pub(crate) port: u16,
    pub(crate) open: bool,
}

/// What the server shows now.
#[derive(Debug, Clone)]
pub(crate) struct Status {
    /// The built site (canonical path).
    pub(crate) site: PathBuf,
    /// The last build's error, when it failed (the site is the one before).
    pub(crate) error: Option<String>,
    /// Files shown although they differ from the manifest.
    pub(crate) unverified: Vec<String>,
    /// Counts finished builds, good or bad; pages reload when it moves.
    /// A good build moves it once its pages are in place, before the
    /// files that list them ([`crate::layout::written_last`]).
    pub(crate) generation: u64,
    /// Those files are still being written: requests for them wait.
    pub(crate) finishing: bool,
}

pub(crate) struct Shared {
    status: Mutex<Status>,
    changed: Condvar,
}

impl Shared {
    pub(crate) fn status(&self) -> Status {
        self.status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Wait until the generation is not `seen`, or `timeout`; returns it.
    pub(crate) fn wait_newer(&self, seen: u64, timeout: Duration) -> u64 {
        let guard = self.status.lock().unwrap_or_else(|e| e.into_inner());
        let (guard, _) = self
            .changed
            .wait_timeout_while(guard, timeout, |s| s.generation == seen)
            .unwrap_or_else(|e| e.into_inner());
        guard.generation
    }

    /// Wait while the files a build writes last are being written, or
    /// `timeout`; the status then.
    pub(crate) fn wait_finished(&self, timeout: Duration) -> Status {
        let guard = self.status.lock().unwrap_or_else(|e| e.into_inner());
        let (guard, _) = self
            .changed
            .wait_timeout_while(guard, timeout, |s| s.finishing)
            .unwrap_or_else(|e| e.into_inner());
        guard.clone()
    }

    fn update(&self, f: impl FnOnce(&mut Status)) {
        let mut s = self.status.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut s);
        s.generation += 1;
        self.changed.notify_all();
    }

    /// The files a build writes last are in place: requests for them go on.
    fn finished(&self) {
        let mut s = self.status.lock().unwrap_or_else(|e| e.into_inner());
        s.finishing = false;
        self.changed.notify_all();
    }
}

pub(crate) fn serve(opts: &ServeOptions) -> Result<()> {
    let base = preview_base();
    remove_stale_previews(&base);
    let out = base.join(format!("exhibit-serve-{}", std::process::id()));
    if out.exists() {
        crate::fsx::remove_dir_all(&out)?;
    }
    let build_opts = preview_build(opts, &out);
    // The first build must work: there is nothing to fall back on.
    let started = Instant::now();
    // Between rebuilds, unchanged files keep their hashes and unchanged
    // pages their rendering.
    let mut cache = site::BuildCache::default();
    let first = site::build_with(&build_opts, Some(&mut cache), None)?;
    let site_dir = out.canonicalize().context("the preview folder vanished")?;
    // The banner and the overlay are pages too: a private name or value in
    // a file name or a quoted source line shows as its placeholder there.
    let redactor = crate::redact::Redactor::new(crate::redact::Detector::builtin());
    let shared = Arc::new(Shared {
        status: Mutex::new(Status {
            site: site_dir,
            error: None,
            unverified: redacted(&redactor, &first.unverified),
            generation: 1,
            finishing: false,
        }),
        changed: Condvar::new(),
    });
    report_build(&first, started.elapsed());

    // Watch before announcing the address: an edit made as soon as the
    // server says it is up must not be missed.
    let (tx, rx) = mpsc::channel();
    let _watcher = watch::watch(&opts.root, opts.theme.as_deref(), tx)?;
    let (server, port) = bind(opts.bind, opts.port)?;
    announce(opts, port, &out);
    start_threads(server, opts.bind, port, &shared);

    loop {
        let Ok(paths) = rx.recv() else {
            crate::error::bail!("the file watcher stopped");
        };
        let mut relevant = paths.iter().any(|p| counts(p));
        // What arrived while the last build ran is one more edit, not many.
        while let Ok(paths) = rx.try_recv() {
            relevant |= paths.iter().any(|p| counts(p));
        }
        if relevant {
            rebuild(&build_opts, &mut cache, &shared, &redactor);
        }
    }
}

/// The build the preview runs: into its own folder, never published.
fn preview_build(opts: &ServeOptions, out: &Path) -> BuildOptions {
    BuildOptions {
        root: opts.root.clone(),
        out: out.to_path_buf(),
        theme: opts.theme.clone(),
        preview: true,
        single_file: false,
        // The preview is never published: no commitments.
        key: None,
        expect: Vec::new(),
        strict: false,
    }
}

/// Say where the preview is (and warn when other machines can reach it).
fn announce(opts: &ServeOptions, port: u16, out: &Path) {
    let url = match opts.bind {
        IpAddr::V6(a) => format!("http://[{a}]:{port}/"),
        IpAddr::V4(a) => format!("http://{a}:{port}/"),
    };
    if !opts.bind.is_loopback() {
        eprintln!(
            "warning: serving on {} makes the preview, unpublished and unverified material included, reachable from other machines",
            opts.bind
        );
    }
    println!("serving {} at {url}", opts.root.display());
    println!("preview files in {}", out.display());
    println!("watching for changes; press Ctrl-C to stop");
    if opts.open {
        open_browser(&url);
    }
}

/// The threads are fixed in number whatever the clients do: one gathering
/// request heads, the workers answering them (see `net`), and one writing
/// every reload stream.
fn start_threads(server: TcpListener, bind: IpAddr, port: u16, shared: &Arc<Shared>) {
    let hosts: Arc<[String]> = http::allowed_hosts(bind, port).into();
    let streams = Arc::new(http::Streams::default());
    {
        let (shared, streams) = (Arc::clone(shared), Arc::clone(&streams));
        net::start(server, move |req| {
            http::handle(req, &shared, &hosts, &streams)
        });
    }
    let shared = Arc::clone(shared);
    std::thread::spawn(move || streams.broadcast(&shared));
}

/// Build again after an edit; a failed build keeps the last good site
/// served and shows its error, redacted, in the overlay.
fn rebuild(
    build_opts: &BuildOptions,
    cache: &mut site::BuildCache,
    shared: &Shared,
    redactor: &crate::redact::Redactor,
) {
    let started = Instant::now();
    cache.rendered = 0;
    // Pages reload as soon as the build's pages are in place; the files
    // that list them follow, and requests for those wait until they have.
    let announced = std::cell::Cell::new(false);
    let announce = |report: &site::BuildReport| {
        announced.set(true);
        shared.update(|s| {
            s.error = None;
            s.unverified = redacted(redactor, &report.unverified);
            s.finishing = true;
        });
    };
    match site::build_with(build_opts, Some(cache), Some(&announce)) {
        Ok(report) => {
            // A whole build (the first after a failed one) is announced
            // once it is in place; held requests go on before the report.
            if !announced.get() {
                announce(&report);
            }
            shared.finished();
            report_build(&report, started.elapsed());
            println!("  ({} rendered, the others reused)", cache.rendered);
        }
        Err(err) => {
            let text = err.describe();
            eprintln!("{text}");
            eprintln!("(still serving the last good build)");
            let shown = redactor.redact(&text).into_owned();
            // A build that failed after its pages were announced put them
            // back: pages reload again, to the last good build.
            shared.update(|s| {
                s.error = Some(shown);
                s.finishing = false;
            });
        }
    }
}

/// Banner lines (`campaign/path: verdict`), the path read as a name is
/// (`db01.internal.log` names a host).
fn redacted(redactor: &crate::redact::Redactor, lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|l| match l.rsplit_once(": ") {
            Some((path, verdict)) => format!("{}: {verdict}", redactor.redact_name(path)),
            None => redactor.redact(l).into_owned(),
        })
        .collect()
}

/// Where the preview is written: memory-backed where the system has it
/// (`$XDG_RUNTIME_DIR`, `/dev/shm`), since a rebuild rewrites every file.
fn preview_base() -> PathBuf {
    let writable =
        |p: &Path| p.is_dir() && std::fs::metadata(p).is_ok_and(|m| !m.permissions().readonly());
    std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| writable(p))
        .or_else(|| Some(PathBuf::from("/dev/shm")).filter(|p| writable(p)))
        .unwrap_or_else(std::env::temp_dir)
}

/// Preview folders of servers that are gone (stopped with Ctrl-C): their
/// name carries the process id, and only folders exhibit wrote are removed.
fn remove_stale_previews(base: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        // A preview's folder, or one of the hidden folders a build keeps
        // beside it (`.exhibit-serve-PID.exhibit-staging`, ...).
        let (pid, ours) = match name.strip_prefix(".exhibit-serve-") {
            Some(rest) => match rest.split_once('.') {
                Some((pid, tag)) => (
                    pid,
                    [layout::STAGING, layout::BEFORE, layout::OLD].contains(&tag),
                ),
                None => continue,
            },
            None => match name.strip_prefix("exhibit-serve-") {
                Some(pid) => (pid, e.path().join(site::MARKER).is_file()),
                None => continue,
            },
        };
        let alive = Path::new("/proc").join(pid).exists();
        if !alive && pid.parse::<u32>().is_ok() && ours {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Editor droppings and exhibit's own staging folders do not count as edits.
fn counts(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    !(name.ends_with('~')
        || name.ends_with(".swp")
        || name.ends_with(".swx")
        || name.starts_with(".#")
        || name == "4913"
        || path
            .components()
            .any(|c| c.as_os_str().to_string_lossy().starts_with(".exhibit-")))
}

fn report_build(report: &site::BuildReport, took: Duration) {
    println!(
        "built {} page{} in {} ms",
        report.pages,
        if report.pages == 1 { "" } else { "s" },
        took.as_millis()
    );
    if !report.unverified.is_empty() {
        println!(
            "preview only: {} differing from the manifest (`exhibit build` refuses unsealed files until `exhibit seal --update`):",
            files(report.unverified.len())
        );
        for u in &report.unverified {
            println!("  {u}");
        }
    }
}

/// `1 file`, `2 files`.
pub(crate) fn files(n: usize) -> String {
    format!("{n} file{}", if n == 1 { "" } else { "s" })
}

/// Bind `port`, or the next free one (up to 100 further).
fn bind(addr: IpAddr, port: u16) -> Result<(TcpListener, u16)> {
    let mut last = None;
    for p in port..=port.saturating_add(100) {
        match TcpListener::bind((addr, p)) {
            Ok(s) => {
                let bound = s.local_addr().map_or(p, |a| a.port());
                return Ok((s, bound));
            }
            Err(e) => last = Some(e),
        }
        if port == 0 {
            break;
        }
    }
    crate::error::bail!(
        "no free port from {port} to {} on {addr}: {}",
        port.saturating_add(100),
        last.map(|e| e.to_string()).unwrap_or_default()
    )
}

fn open_browser(url: &str) {
    let cmd = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(cmd).arg(url).spawn() {
        eprintln!("warning: could not open a browser with `{cmd}`: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a killed preview left is removed: its folder (marked as
    /// exhibit's) and the hidden folders its builds keep beside it; a
    /// running preview's, and folders that only look alike, stay.
    #[test]
    fn what_a_dead_preview_left_is_removed_and_nothing_else() {
        let base = std::env::temp_dir().join(format!("exhibit-stale-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (dead, alive) = ("3999999999", std::process::id().to_string());
        let names = [
            (format!("exhibit-serve-{dead}"), true, false),
            (format!("exhibit-serve-{dead}x"), true, true),
            (
                format!(".exhibit-serve-{dead}.exhibit-staging"),
                false,
                false,
            ),
            (
                format!(".exhibit-serve-{dead}.exhibit-before"),
                false,
                false,
            ),
            (format!(".exhibit-serve-{dead}.exhibit-old"), false, false),
            (format!(".exhibit-serve-{dead}.notes"), false, true),
            // Not marked as written by exhibit.
            ("exhibit-serve-3999999998".to_string(), false, true),
            (
                format!(".exhibit-serve-{alive}.exhibit-before"),
                false,
                true,
            ),
            (format!("exhibit-serve-{alive}"), true, true),
        ];
        for (name, marked, _) in &names {
            std::fs::create_dir_all(base.join(name)).unwrap();
            if *marked {
                std::fs::write(base.join(name).join(site::MARKER), "").unwrap();
            }
        }
        remove_stale_previews(&base);
        for (name, _, stays) in &names {
            assert_eq!(base.join(name).exists(), *stays, "{name}");
        }
        std::fs::remove_dir_all(&base).unwrap();
    }
}
