//! The preview's connection handling, bounded whatever the clients do.
//! One thread (the gatherer) accepts connections and gathers each one's
//! request head without blocking on any of them; a complete head, parsed
//! by `httparse`, goes through a bounded queue to a fixed pool of workers.
//! A connection that sends nothing, or trickles its head, costs no thread
//! and is closed after [`HEAD_TIMEOUT`]; beyond [`MAX_WAITING`] open
//! connections, or a full queue, the client gets 503 at once. Every
//! response closes its connection (`Connection: close`), so a worker never
//! waits on an idle client either.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Threads answering requests: enough for a browser's parallel fetches.
pub(crate) const WORKERS: usize = 4;
/// Requests read in full and waiting for a worker.
const QUEUE: usize = 64;
/// Connections whose request head has not arrived yet; one more is
/// answered 503 and closed by the gatherer.
pub(crate) const MAX_WAITING: usize = 512;
/// How long a client has, from connecting, to send its whole request head.
pub(crate) const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest request head read; a longer one is answered 431.
const MAX_HEAD: usize = 16 * 1024;
/// Headers read from one request; more is answered 431 too.
const MAX_HEADERS: usize = 64;
/// How long one write to a client may block a worker.
pub(crate) const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// A request head as `httparse` read it.
struct Head {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
}

/// A request whose head has arrived, with the connection to answer on.
pub(crate) struct Request {
    pub(crate) method: String,
    /// The request target as sent (path and query).
    pub(crate) target: String,
    headers: Vec<(String, String)>,
    pub(crate) stream: TcpStream,
}

impl Request {
    fn new(head: Head, stream: TcpStream) -> Request {
        Request {
            method: head.method,
            target: head.target,
            headers: head.headers,
            stream,
        }
    }

    /// The first header of that name (case-insensitive).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Start the gatherer and [`WORKERS`] workers, each calling `handle` for
/// one request at a time. These are all the threads connections ever get.
pub(crate) fn start(listener: TcpListener, handle: impl Fn(Request) + Send + Sync + 'static) {
    let (tx, rx) = mpsc::sync_channel::<Request>(QUEUE);
    let rx = Arc::new(Mutex::new(rx));
    let handle = Arc::new(handle);
    for _ in 0..WORKERS {
        let (rx, handle) = (Arc::clone(&rx), Arc::clone(&handle));
        std::thread::spawn(move || work(&rx, &*handle));
    }
    std::thread::spawn(move || gather(&listener, &tx));
}

fn work(rx: &Mutex<Receiver<Request>>, handle: &(impl Fn(Request) + ?Sized)) {
    loop {
        // The lock is held only while waiting: one idle worker takes the
        // next request, the others wait for the lock.
        let next = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok(req) = next else { return };
        let ready = req
            .stream
            .set_nonblocking(false)
            .and_then(|_| req.stream.set_write_timeout(Some(WRITE_TIMEOUT)))
            .and_then(|_| req.stream.set_read_timeout(Some(WRITE_TIMEOUT)));
        if ready.is_ok() {
            handle(req);
        }
    }
}

/// A connection whose head is still arriving.
struct Waiting {
    stream: TcpStream,
    head: Vec<u8>,
    deadline: Instant,
}

/// What one read of a waiting connection gave.
enum Step {
    More,
    Done(Head),
    Refuse(&'static str),
    Gone,
}

/// The gatherer's loop: wait until the listener or a waiting connection
/// has something to read, take it, and pass on complete heads.
fn gather(listener: &TcpListener, queue: &SyncSender<Request>) {
    if listener.set_nonblocking(true).is_err() {
        eprintln!("warning: the preview cannot serve: its socket refused non-blocking mode");
        return;
    }
    let mut waiting: Vec<Waiting> = Vec::new();
    loop {
        let now = Instant::now();
        let wake = waiting
            .iter()
            .map(|w| w.deadline.saturating_duration_since(now))
            .min()
            .unwrap_or(Duration::from_secs(1));
        let ready = poll::readable(listener, &waiting, wake);
        let mut kept = Vec::with_capacity(waiting.len());
        for (mut w, ready) in waiting.drain(..).zip(ready.conns) {
            let step = if ready { read_head(&mut w) } else { Step::More };
            match step {
                Step::More if Instant::now() < w.deadline => kept.push(w),
                // Too slow: closed without an answer, like any server.
                Step::More | Step::Gone => {}
                Step::Refuse(status) => refuse(&w.stream, status),
                Step::Done(head) => match queue.try_send(Request::new(head, w.stream)) {
                    Ok(()) => {}
                    Err(TrySendError::Full(req)) => refuse(&req.stream, BUSY),
                    Err(TrySendError::Disconnected(_)) => return,
                },
            }
        }
        waiting = kept;
        if ready.listener {
            accept(listener, &mut waiting);
        }
    }
}

const BUSY: &str = "503 Service Unavailable";

/// Take every pending connection; past [`MAX_WAITING`] each is refused.
fn accept(listener: &TcpListener, waiting: &mut Vec<Waiting>) {
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                if stream.set_nonblocking(true).is_err() {
                    continue;
                }
                if waiting.len() >= MAX_WAITING {
                    refuse(&stream, BUSY);
                    continue;
                }
                let _ = stream.set_nodelay(true);
                waiting.push(Waiting {
                    stream,
                    head: Vec::new(),
                    deadline: Instant::now() + HEAD_TIMEOUT,
                });
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            // Out of file descriptors or the like: the connection stays in
            // the backlog; try again shortly rather than spin.
            Err(_) => {
                std::thread::sleep(Duration::from_millis(50));
                return;
            }
        }
    }
}

/// Read what the connection has, without blocking, and parse the head.
fn read_head(w: &mut Waiting) -> Step {
    let mut buf = [0u8; 4096];
    loop {
        match (&w.stream).read(&mut buf) {
            Ok(0) => return Step::Gone,
            Ok(n) => {
                w.head.extend_from_slice(&buf[..n]);
                if w.head.len() > MAX_HEAD {
                    break;
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Step::Gone,
        }
    }
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut headers);
    match parsed.parse(&w.head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) if w.head.len() <= MAX_HEAD => return Step::More,
        Ok(httparse::Status::Partial) | Err(httparse::Error::TooManyHeaders) => {
            return Step::Refuse("431 Request Header Fields Too Large")
        }
        Err(_) => return Step::Refuse("400 Bad Request"),
    }
    Step::Done(Head {
        method: parsed.method.unwrap_or("").to_string(),
        target: parsed.path.unwrap_or("").to_string(),
        headers: parsed
            .headers
            .iter()
            .map(|h| {
                let value = String::from_utf8_lossy(h.value).trim().to_string();
                (h.name.to_string(), value)
            })
            .collect(),
    })
}

/// A short plain answer written without blocking (it fits any socket
/// buffer), then the connection is closed.
fn refuse(stream: &TcpStream, status: &str) {
    let _ = stream.set_nonblocking(true);
    let body = format!("{}\n", status.split_once(' ').map_or(status, |s| s.1));
    let mut out = stream;
    let _ = write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nRetry-After: 5\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.shutdown(std::net::Shutdown::Write);
}

/// Waiting for the first of several sockets to be readable.
mod poll {
    use super::Waiting;
    use std::net::TcpListener;
    use std::time::Duration;

    pub(super) struct Ready {
        pub(super) listener: bool,
        pub(super) conns: Vec<bool>,
    }

    /// `poll(2)`: the thread sleeps until a socket has data (or a new
    /// connection), or `timeout` passes.
    #[cfg(unix)]
    pub(super) fn readable(
        listener: &TcpListener,
        waiting: &[Waiting],
        timeout: Duration,
    ) -> Ready {
        use std::os::fd::AsRawFd;
        let fd = |raw| libc::pollfd {
            fd: raw,
            events: libc::POLLIN,
            revents: 0,
        };
        let mut fds: Vec<libc::pollfd> = std::iter::once(fd(listener.as_raw_fd()))
            .chain(waiting.iter().map(|w| fd(w.stream.as_raw_fd())))
            .collect();
        // Rounded up, so a deadline is not polled for in a busy loop.
        let ms = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int;
        // SAFETY: `fds` is a live, exclusively borrowed array of `len`
        // pollfd structs for the whole call; poll writes only `revents`.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if n < 0 {
            // Interrupted by a signal: nothing is ready; the loop polls again.
            fds.iter_mut().for_each(|f| f.revents = 0);
        }
        // An error or hang-up counts as readable: the read then tells.
        Ready {
            listener: fds[0].revents != 0,
            conns: fds[1..].iter().map(|f| f.revents != 0).collect(),
        }
    }

    /// Elsewhere: look at every socket every few milliseconds (reads and
    /// accepts do not block, so "ready" only means "try").
    #[cfg(not(unix))]
    pub(super) fn readable(_: &TcpListener, waiting: &[Waiting], timeout: Duration) -> Ready {
        std::thread::sleep(timeout.min(Duration::from_millis(10)));
        Ready {
            listener: true,
            conns: vec![true; waiting.len()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting_with(head: &[u8]) -> (Waiting, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (stream, _) = listener.accept().unwrap();
        stream.set_nonblocking(true).unwrap();
        client.write_all(head).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let w = Waiting {
            stream,
            head: Vec::new(),
            deadline: Instant::now() + HEAD_TIMEOUT,
        };
        (w, client)
    }

    #[test]
    fn a_head_is_parsed_once_complete() {
        let (mut w, mut client) = waiting_with(b"GET /a?b HTTP/1.1\r\nHost: x:1\r\n");
        assert!(matches!(read_head(&mut w), Step::More));
        client.write_all(b"If-None-Match: \"e\"\r\n\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let Step::Done(head) = read_head(&mut w) else {
            panic!("the head is complete")
        };
        let req = Request::new(head, w.stream);
        assert_eq!((req.method.as_str(), req.target.as_str()), ("GET", "/a?b"));
        assert_eq!(req.header("host"), Some("x:1"));
        assert_eq!(req.header("IF-NONE-MATCH"), Some("\"e\""));
    }

    #[test]
    fn bad_long_and_closed_heads_are_refused() {
        let (mut w, _c) = waiting_with(b"GET / HTTP/1.1\r\nBad Header\r\n\r\n");
        assert!(matches!(read_head(&mut w), Step::Refuse(s) if s.starts_with("400")));
        let long = format!("GET / HTTP/1.1\r\nX: {}\r\n", "a".repeat(MAX_HEAD));
        let (mut w, _c) = waiting_with(long.as_bytes());
        let mut step = read_head(&mut w);
        for _ in 0..20 {
            if !matches!(step, Step::More) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
            step = read_head(&mut w);
        }
        assert!(matches!(step, Step::Refuse(s) if s.starts_with("431")));
        let many: String = (0..MAX_HEADERS + 1)
            .map(|i| format!("H{i}: v\r\n"))
            .collect();
        let (mut w, _c) = waiting_with(format!("GET / HTTP/1.1\r\n{many}\r\n").as_bytes());
        assert!(matches!(read_head(&mut w), Step::Refuse(s) if s.starts_with("431")));
        let (mut w, c) = waiting_with(b"GE");
        drop(c);
        std::thread::sleep(Duration::from_millis(20));
        assert!(matches!(read_head(&mut w), Step::Gone));
    }
}
