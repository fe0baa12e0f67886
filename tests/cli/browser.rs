//! Headless Chromium driven over the DevTools protocol (through
//! `tungstenite`), shared by the preview and the reader tests.

use super::serve::get;
use super::*;
use serde_json::{json, Value};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A child process killed when dropped, even by a panic mid-setup.
pub(super) struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Headless Chromium with one page, driven over the DevTools protocol.
pub struct Browser {
    _child: Killed,
    ws: tungstenite::WebSocket<TcpStream>,
    next_id: u64,
    events: Vec<Value>,
    _profile: PathBuf,
}

impl Browser {
    pub fn start() -> Browser {
        let bin = std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".into());
        let profile = scratch("chromium-profile");
        let child = Killed(
            Command::new(&bin)
                .args([
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--remote-debugging-port=0",
                ])
                .arg(format!("--user-data-dir={}", profile.display()))
                .arg("about:blank")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| {
                    panic!(
                    "cannot start `{bin}` ({e}): install chromium (.ci/run does) or set CHROMIUM"
                )
                }),
        );
        let active = profile.join("DevToolsActivePort");
        let deadline = Instant::now() + Duration::from_secs(30);
        let port = loop {
            if let Some(p) = std::fs::read_to_string(&active)
                .ok()
                .and_then(|t| t.lines().next().map(str::to_string))
                .filter(|p| !p.is_empty())
            {
                break p;
            }
            assert!(Instant::now() < deadline, "chromium did not open DevTools");
            std::thread::sleep(Duration::from_millis(50));
        };
        let addr = format!("127.0.0.1:{port}");
        let (_, _, body) = get(&addr, "/json/list");
        let targets: Value = serde_json::from_slice(&body).unwrap();
        let ws_url = targets
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["type"] == "page")
            .expect("a page target")["webSocketDebuggerUrl"]
            .as_str()
            .unwrap()
            .to_string();
        let stream = TcpStream::connect(&addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let (ws, _) = tungstenite::client(ws_url.as_str(), stream).expect("DevTools handshake");
        let mut b = Browser {
            _child: child,
            ws,
            next_id: 0,
            events: Vec::new(),
            _profile: profile,
        };
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
            b.call(domain, json!({}));
        }
        b
    }

    /// Read one message if one arrives within the socket timeout.
    fn read(&mut self) -> Option<Value> {
        match self.ws.read() {
            Ok(tungstenite::Message::Text(t)) => serde_json::from_str(t.as_str()).ok(),
            Ok(_) => None,
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                None
            }
            Err(e) => panic!("DevTools connection failed: {e}"),
        }
    }

    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let msg = json!({"id": id, "method": method, "params": params}).to_string();
        self.ws.send(tungstenite::Message::text(msg)).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            assert!(Instant::now() < deadline, "no answer to {method}");
            if let Some(v) = self.read() {
                if v["id"] == id {
                    assert!(v.get("error").is_none(), "{method} failed: {v}");
                    return v["result"].clone();
                }
                self.events.push(v);
            }
        }
    }

    pub fn eval(&mut self, js: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": js, "returnByValue": true}),
        );
        r["result"]["value"].clone()
    }

    pub fn navigate(&mut self, url: &str) {
        self.events.clear();
        self.call("Page.navigate", json!({"url": url}));
        self.wait_for("document.readyState === 'complete'", "the page loads");
    }

    /// Poll a JavaScript condition (never reloading the page).
    pub fn wait_for(&mut self, js: &str, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.eval(js) != json!(true) {
            assert!(Instant::now() < deadline, "timed out waiting: {what}");
            std::thread::sleep(Duration::from_millis(50));
            while let Some(v) = self.read() {
                self.events.push(v);
            }
        }
    }

    /// Console errors, uncaught exceptions and failed loads seen so far.
    pub fn errors(&mut self) -> Vec<String> {
        while let Some(v) = self.read() {
            self.events.push(v);
        }
        self.events
            .iter()
            .filter(|e| {
                let m = e["method"].as_str().unwrap_or("");
                (m == "Runtime.consoleAPICalled" && e["params"]["type"] == "error")
                    || m == "Runtime.exceptionThrown"
                    || (m == "Log.entryAdded" && e["params"]["entry"]["level"] == "error")
            })
            .map(|e| e.to_string())
            .collect()
    }
}

impl Browser {
    /// Evaluate an expression that yields a promise, and its value.
    pub fn eval_await(&mut self, js: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": js, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(
            r.get("exceptionDetails").is_none(),
            "script failed: {}",
            r["exceptionDetails"]
        );
        r["result"]["value"].clone()
    }

    /// Viewport width (CSS px), phone emulation, and colour scheme.
    pub fn emulate(&mut self, width: u32, height: u32, mobile: bool, scheme: &str) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}),
        );
        self.media("screen", scheme);
    }

    pub fn media(&mut self, media: &str, scheme: &str) {
        self.call(
            "Emulation.setEmulatedMedia",
            json!({"media": media, "features": [{"name": "prefers-color-scheme", "value": scheme}]}),
        );
    }

    /// A PNG of the whole page, up to `max_height` CSS px tall.
    pub fn screenshot(&mut self, max_height: u32) -> Vec<u8> {
        let height = self
            .eval("document.documentElement.scrollHeight")
            .as_f64()
            .unwrap_or(900.0);
        let width = self.eval("window.innerWidth").as_f64().unwrap_or(1280.0);
        let r = self.call(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true,
                   "clip": {"x": 0, "y": 0, "width": width, "height": height.min(max_height as f64), "scale": 1}}),
        );
        base64_decode(r["data"].as_str().expect("screenshot data"))
    }

    /// The page printed as the `print` medium lays it out, as PDF bytes.
    pub fn pdf(&mut self) -> Vec<u8> {
        let r = self.call(
            "Page.printToPDF",
            json!({"preferCSSPageSize": true, "displayHeaderFooter": false}),
        );
        base64_decode(r["data"].as_str().expect("pdf data"))
    }
}

/// DevTools sends screenshots and PDFs as standard base64.
pub(super) fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {c}"),
        }
    };
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    for chunk in text.as_bytes().chunks(4) {
        let data: Vec<u8> = chunk.iter().copied().filter(|&c| c != b'=').collect();
        let n = data
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &c)| n | value(c) << (18 - 6 * i));
        for i in 0..data.len().saturating_sub(1) {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    out
}
