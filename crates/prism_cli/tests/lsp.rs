//! `prism lsp`: the real binary driven over stdio with JSON-RPC, as an editor drives it.
//!
//! Each test writes a small program to a fresh directory (a kernel that imports a user
//! module, `lib/util.prism`), starts the server, opens documents and checks the answers:
//! diagnostics (also from an imported module's unsaved text), hovers, inlay hints for an
//! inferred barrier and for a perspective left to its default, definitions and references
//! across the import, document symbols, and that malformed requests get errors, not a
//! crash. Others write raw bytes: bodies that are not messages get error responses and the
//! server goes on, broken framing ends it with exit code 2 and a message (no panic, no
//! hang), and the exit codes are the protocol's. One more test opens the whole ui corpus
//! and checks that each document's diagnostics are `prism check`'s.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

/// The user module: a warp sum.
const UTIL: &str = "\
# A warp sum for the kernel that imports it.
@prism(\"device\")
@requires(thread[32])
def warp_total(x : float @ thread[1]) -> float @ thread[32]:
    v : float @ thread[1] = x
    for d in range(0, 5):
        v += shfl_xor(v, 1 << d)
    return shfl(v, 0)
";

/// The kernel: warp sums staged in shared memory, read back after a barrier inference
/// inserts (before the `for` on line 23).
const MAIN: &str = "\
# Per-block sums of warp sums, staged in shared memory.
import lib.util as u

WARPS : constexpr(int) = 4

@prism(\"global\")
@requires(grid[1], block[1], thread[32], smem=64)
def block_sums(vals : ptr(const(float)) @ grid[1], out : ptr(float) @ grid[1]):
    b : int @ block[1] = id()
    g : int @ thread[1] = id()
    with partition(out, p=block[1], f=lambda i: b + i) as block_out:
        with group(block[1]):
            partial : shared(float[WARPS]) @ block[1]
            w : int @ thread[32] = id()
            with partition(partial, p=thread[32], f=lambda i: w + i) as slot:
                with group(warp[1]):
                    x : float @ thread[32] = u.warp_total(vals[g])
                    with claim(slot, p=thread[1]) as lane0:
                        match split(thread):
                            case 1:
                                lane0[0] = x
            total : float = 0.0
            for i in range(WARPS):
                total += partial[i]
            with claim(block_out, p=thread[1]) as first:
                match split(thread):
                    case 1:
                        first[0] = total
";

/// A running `prism lsp` with a reader thread, so that a silent server fails the test
/// after a timeout instead of hanging it.
struct Server {
    child: Child,
    /// `None` once closed ([`Server::end`]).
    stdin: Option<ChildStdin>,
    /// The server's stderr, when a test reads it ([`Server::launch`]).
    stderr: Option<ChildStderr>,
    messages: Receiver<Value>,
    /// Notifications received while waiting for something else.
    pending: Vec<Value>,
    next_id: i64,
}

impl Server {
    fn start(root: &Path) -> Server {
        Server::start_with(root, json!({}))
    }

    fn start_with(root: &Path, capabilities: Value) -> Server {
        let mut s = Server::launch(root, Stdio::inherit());
        s.initialize(root, capabilities);
        s
    }

    /// Starts the server without the handshake; `stderr` is kept for [`Server::end`] when
    /// piped.
    fn launch(root: &Path, stderr: Stdio) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_prism"))
            .arg("lsp")
            // The standard library's modules are written to the user's cache for go to
            // definition: the project's own, in tests.
            .env("XDG_CACHE_HOME", root.join("cache"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start prism lsp");
        let stdin = child.stdin.take();
        let stderr = child.stderr.take();
        let stdout = child.stdout.take().expect("stdout");
        let (tx, messages) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(m) = read_message(&mut r) {
                if tx.send(m).is_err() {
                    break;
                }
            }
        });
        Server { child, stdin, stderr, messages, pending: Vec::new(), next_id: 0 }
    }

    fn initialize(&mut self, root: &Path, capabilities: Value) {
        let init = self
            .request("initialize", json!({ "processId": null, "rootUri": uri(root), "capabilities": capabilities }));
        assert!(init["result"]["capabilities"]["hoverProvider"] == json!(true), "{init}");
        self.notify("initialized", json!({}));
    }

    fn send(&mut self, v: &Value) {
        let body = v.to_string();
        self.send_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }

    /// Writes bytes as they are: bad framing, bodies that are not JSON.
    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).expect("write to the server");
        stdin.flush().expect("flush");
    }

    /// Closes stdin when `close`, and waits for the server to exit (a minute at most; it
    /// must not hang whether stdin is open or not): its status and, when piped, stderr.
    fn end(&mut self, close: bool) -> (ExitStatus, String) {
        if close {
            self.stdin = None;
        }
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for the server") {
                break status;
            }
            assert!(start.elapsed() < Duration::from_secs(60), "the server did not exit within 60 s");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        if let Some(mut e) = self.stderr.take() {
            std::io::Read::read_to_string(&mut e, &mut err).expect("the server's stderr");
        }
        (status, err)
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Sends a request and returns the whole response (`result` or `error`).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        self.answer(&json!(id))
    }

    /// The response with id `id` (`null` for the error responses to bodies that are not
    /// messages).
    fn answer(&mut self, id: &Value) -> Value {
        let is_it = |m: &Value| m["id"] == *id && m.get("method").is_none();
        if let Some(i) = self.pending.iter().position(is_it) {
            return self.pending.remove(i);
        }
        loop {
            let m = self.recv();
            if is_it(&m) {
                return m;
            }
            self.pending.push(m);
        }
    }

    /// The next message, or `None` after `wait` of silence.
    fn try_recv(&mut self, wait: Duration) -> Option<Value> {
        if !self.pending.is_empty() {
            return Some(self.pending.remove(0));
        }
        self.messages.recv_timeout(wait).ok()
    }

    fn recv(&mut self) -> Value {
        match self.messages.recv_timeout(Duration::from_secs(60)) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => panic!("the server said nothing for 60 s"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed its output"),
        }
    }

    /// The diagnostics published for `uri`, the first publication (in order, earlier ones
    /// already received included) that satisfies `want`. The server publishes again when
    /// inference has run or an imported module changed, so a test waits for the state it
    /// expects rather than counting publications.
    fn diagnostics(&mut self, uri: &str, want: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let is_it = |m: &Value| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri;
        loop {
            let m = match self.pending.iter().position(is_it) {
                Some(i) => self.pending.remove(i),
                None => {
                    let m = self.recv();
                    if !is_it(&m) {
                        self.pending.push(m);
                        continue;
                    }
                    m
                }
            };
            let d = m["params"]["diagnostics"].as_array().cloned().unwrap_or_default();
            if want(&d) {
                return d;
            }
        }
    }

    fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "prism", "version": 1, "text": text } }),
        );
    }

    fn at(&mut self, method: &str, uri: &str, line: u32, character: u32) -> Value {
        self.request(
            method,
            json!({
                "textDocument": { "uri": uri },
                "position": { "line": line, "character": character },
                "context": { "includeDeclaration": true }
            }),
        )
    }

    fn stop(mut self) {
        let r = self.request("shutdown", json!(null));
        assert_eq!(r["result"], json!(null), "{r}");
        self.notify("exit", json!(null));
        let (status, _) = self.end(false);
        assert!(status.success(), "the server exited with {status}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // A test that failed midway must not leave the server running.
        let _ = self.child.kill();
    }
}

fn read_message(r: &mut impl BufRead) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            len = n.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; len?];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// A fresh directory holding `main.prism` and `lib/util.prism`.
fn project(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("prism-lsp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("lib")).expect("mkdir");
    std::fs::write(dir.join("main.prism"), MAIN).expect("write");
    std::fs::write(dir.join("lib/util.prism"), UTIL).expect("write");
    dir
}

/// The line (0-based) of the first line of `text` containing `needle`, and its column.
fn find(text: &str, needle: &str) -> (u32, u32) {
    for (i, l) in text.lines().enumerate() {
        if let Some(c) = l.find(needle) {
            return (i as u32, c as u32);
        }
    }
    panic!("`{needle}` is not in the text");
}

#[test]
fn diagnostics_come_from_the_document_and_from_an_imported_module() {
    let dir = project("diagnostics");
    let mut s = Server::start(&dir);
    let main = uri(&dir.join("main.prism"));
    let util = uri(&dir.join("lib/util.prism"));
    s.open(&main, MAIN);
    s.diagnostics(&main, |d| d.is_empty());

    // The module's unsaved text wins over the disk: the default perspective of `v` is the
    // code's (thread[32]), and a per-lane value cannot go there.
    let broken = UTIL.replace("v : float @ thread[1] = x", "v : float = x");
    s.open(&util, &broken);
    let own = s.diagnostics(&util, |d| !d.is_empty());
    assert!(own.iter().all(|d| d["code"] == "write-down"), "{own:?}");
    assert_eq!(own[0]["range"]["start"], json!({ "line": 4, "character": 16 }), "{own:?}");
    assert_eq!(own[0]["severity"], json!(1));
    assert!(own[0]["message"].as_str().unwrap().starts_with("value for `v` (at thread[32]) depends on `x`"));
    let related = own[0]["relatedInformation"].as_array().expect("secondary labels");
    assert!(related.iter().any(|r| r["message"] == "`x` is declared at thread[1] here"), "{related:?}");
    // The kernel that imports it shows the module's errors on its import line.
    let through = s.diagnostics(&main, |d| !d.is_empty());
    assert!(through.iter().all(|d| d["code"] == "write-down"), "{through:?}");
    assert_eq!(through[0]["range"]["start"]["line"], json!(1));
    assert!(through[0]["message"].as_str().unwrap().starts_with("in `"), "{through:?}");
    let related = through[0]["relatedInformation"].as_array().expect("the real place");
    assert!(related.iter().any(|r| r["location"]["uri"] == util.as_str()), "{related:?}");

    // Fixing the module clears both; breaking the kernel's own syntax reports it there.
    s.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": util, "version": 2 }, "contentChanges": [{ "text": UTIL }] }),
    );
    s.diagnostics(&util, |d| d.is_empty());
    s.diagnostics(&main, |d| d.is_empty());
    let typo = MAIN.replace("total += partial[i]", "total += partial[i");
    s.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": main, "version": 2 }, "contentChanges": [{ "text": typo }] }),
    );
    let d = s.diagnostics(&main, |d| !d.is_empty());
    assert_eq!(d[0]["range"]["start"]["line"], json!(23), "{d:?}");
    s.stop();
}

#[test]
fn hover_shows_type_perspective_and_code_perspective() {
    let dir = project("hover");
    let mut s = Server::start(&dir);
    let main = uri(&dir.join("main.prism"));
    s.open(&main, MAIN);
    // `x` where it is declared, and where it is used.
    let (line, col) = find(MAIN, "x : float @ thread[32]");
    let h = s.at("textDocument/hover", &main, line, col);
    let text = h["result"]["contents"]["value"].as_str().expect("a hover").to_string();
    assert!(text.contains("x : float @ thread[32]"), "{text}");
    assert!(text.contains("code at thread[32]"), "{text}");
    let (line, col) = find(MAIN, "= x");
    let h = s.at("textDocument/hover", &main, line, col + 2);
    let text = h["result"]["contents"]["value"].as_str().expect("a hover").to_string();
    assert!(text.contains("x : float @ thread[32]") && text.contains("code at thread[1]"), "{text}");
    // A declaration without `@` has the code's perspective; a shared array is block[1].
    let (line, col) = find(MAIN, "total : float");
    let text = s.at("textDocument/hover", &main, line, col)["result"]["contents"]["value"].to_string();
    assert!(text.contains("total : float @ block[1]"), "{text}");
    let (line, col) = find(MAIN, "partial : shared");
    let text = s.at("textDocument/hover", &main, line, col)["result"]["contents"]["value"].to_string();
    assert!(text.contains("partial : shared(float[4]) @ block[1]"), "{text}");
    // A function of the imported module shows its signature.
    let (line, col) = find(MAIN, "warp_total");
    let text = s.at("textDocument/hover", &main, line, col + 1)["result"]["contents"]["value"].to_string();
    assert!(text.contains("@requires(thread[32])") && text.contains("def warp_total("), "{text}");
    s.stop();
}

#[test]
fn inlay_hints_show_the_inferred_barrier_and_default_perspectives() {
    let dir = project("hints");
    let mut s = Server::start(&dir);
    let main = uri(&dir.join("main.prism"));
    s.open(&main, MAIN);
    let r = s.request(
        "textDocument/inlayHint",
        json!({
            "textDocument": { "uri": main },
            "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 100, "character": 0 } }
        }),
    );
    let hints = r["result"].as_array().expect("hints").clone();
    let (for_line, for_col) = find(MAIN, "for i in range(WARPS)");
    let barrier = hints
        .iter()
        .find(|h| h["label"] == "__syncthreads()")
        .unwrap_or_else(|| panic!("no barrier hint in {hints:?}"));
    assert_eq!(barrier["position"], json!({ "line": for_line, "character": for_col }));
    assert!(barrier["tooltip"].as_str().unwrap().contains("block barrier inserted for `partial`"), "{barrier}");
    let (line, col) = find(MAIN, "total : float");
    let after_type = json!({ "line": line, "character": col + "total : float".len() as u32 });
    assert!(hints.iter().any(|h| h["label"] == "@ block[1]" && h["position"] == after_type), "{hints:?}");
    // The loop variable's type and perspective, and the perspective of a claimed view.
    assert!(hints.iter().any(|h| h["label"] == ": int @ block[1]"), "{hints:?}");
    let (line, col) = find(MAIN, "as lane0");
    let view = json!({ "line": line, "character": col + "as lane0".len() as u32 });
    assert!(hints.iter().any(|h| h["label"] == "@ thread[1]" && h["position"] == view), "{hints:?}");
    s.stop();
}

/// A kernel whose three inferred barriers the CUDA backend lowers three ways: `thread[64]`
/// and `thread[128]` units are named barriers (each size its own range of ids), `thread[8]`
/// units a `__syncwarp` with the unit's lanes. It imports a module whose kernel has a block
/// barrier that barrier motion splits: its hints belong to the module's file only.
const NAMED: &str = "\
import lib.shift as sh

@prism(\"global\")
@requires(grid[1], block[1], thread[128], smem=4096)
@launch_bounds(256)
def pairs(out : ptr(float) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as mine:
        with group(block[1]):
            S : shared(float[256]) @ block[1]
            w : int @ thread[64] = id()
            with partition(S, p=thread[64], f=lambda i: w * 64 + i) as s_w:
                with group(thread[64]):
                    lane : int @ thread[1] = id()
                    with partition(s_w, p=thread[1], f=lambda i: lane + i) as s_t:
                        with group(thread[1]):
                            s_t[0] = float(lane)
                    with group(thread[1]):
                        mine[0] = s_w[(lane + 1) % 64]
            T : shared(float[256]) @ block[1]
            q : int @ thread[128] = id()
            with partition(T, p=thread[128], f=lambda i: q * 128 + i) as t_q:
                with group(thread[128]):
                    l2 : int @ thread[1] = id()
                    with partition(t_q, p=thread[1], f=lambda i: l2 + i) as t_t:
                        with group(thread[1]):
                            t_t[0] = float(l2)
                    with group(thread[1]):
                        mine[0] = t_q[(l2 + 1) % 128]
            E : shared(float[64]) @ block[1]
            e : int @ thread[8] = id()
            with partition(E, p=thread[8], f=lambda i: e * 8 + i) as e_w:
                with group(thread[8]):
                    l3 : int @ thread[1] = id()
                    with partition(e_w, p=thread[1], f=lambda i: l3 + i) as e_t:
                        with group(thread[1]):
                            e_t[0] = float(l3)
                    with group(thread[1]):
                        mine[0] = e_w[(l3 + 1) % 8]
";

/// The imported module: a block barrier before the read of `S` (line 14 of the module),
/// which barrier motion splits into an arrive after the write and a wait before the read,
/// so that the load of `y` overlaps the other threads' arrival.
const SHIFT: &str = "\
@prism(\"global\")
@requires(grid[1], block[1], thread[32], smem=512)
@launch_bounds(128)
def shift(src : ptr(const(float)) @ grid[1], out : ptr(float) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as mine:
        with group(block[1]):
            S : shared(float[128]) @ block[1]
            t : int @ thread[1] = id()
            with partition(S, p=thread[1], f=lambda i: t + i) as s_t:
                with group(thread[1]):
                    s_t[0] = src[g]
            y : float @ thread[1] = src[g + 1] * 2.0
            with group(thread[1]):
                mine[0] = S[(t + 1) % 128] + y
";

/// Named barriers in nested splits: a `thread[64]` unit in a case of a case, and a
/// `thread[128]` unit (a warpgroup) in the other case; each unit size has its own ids.
const ROLES: &str = "\
@prism(\"global\")
@requires(grid[1], block[1], thread[256], smem=2048)
@launch_bounds(256)
def roles(out : ptr(float) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as mine:
        with group(block[1]):
            S : shared(float[256]) @ block[1]
            T : shared(float[256]) @ block[1]
            h : int @ thread[64] = id()
            q : int @ thread[128] = id()
            with partition(S, p=thread[64], f=lambda i: h * 64 + i) as s_h:
                with partition(T, p=thread[128], f=lambda i: q * 128 + i) as t_q:
                    match split(thread):
                        case 128:
                            match split(thread):
                                case 64:
                                    lane : int @ thread[1] = id()
                                    with partition(s_h, p=thread[1], f=lambda i: lane + i) as s_t:
                                        with group(thread[1]):
                                            s_t[0] = float(lane)
                                    with group(thread[1]):
                                        mine[0] = s_h[(lane + 1) % 64]
                                case 64:
                                    pass
                        case 128:
                            l2 : int @ thread[1] = id()
                            with partition(t_q, p=thread[1], f=lambda i: l2 + i) as t_t:
                                with group(thread[1]):
                                    t_t[0] = float(l2)
                            with group(thread[1]):
                                mine[0] = t_q[(l2 + 1) % 128]
";

/// The barrier hints (those without a kind) of the whole document: (line, column, label).
fn barrier_hints(s: &mut Server, uri: &str) -> Vec<(u32, u32, String)> {
    barrier_hint_values(s, uri)
        .iter()
        .map(|h| {
            let p = &h["position"];
            (p["line"].as_u64().unwrap() as u32, p["character"].as_u64().unwrap() as u32, h["label"].to_string())
        })
        .collect()
}

fn barrier_hint_values(s: &mut Server, uri: &str) -> Vec<Value> {
    let r = s.request(
        "textDocument/inlayHint",
        json!({
            "textDocument": { "uri": uri },
            "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 1000, "character": 0 } }
        }),
    );
    let hints = r["result"].as_array().unwrap_or_else(|| panic!("no hints: {r}"));
    hints.iter().filter(|h| h.get("kind").is_none_or(Value::is_null)).cloned().collect()
}

/// Where a barrier that stands before the statement holding `needle` is shown: the line
/// before, where the `with group(thread[1])` around that statement begins, at its
/// indentation.
fn before_group_of(text: &str, needle: &str) -> (u32, u32) {
    let (line, _) = find(text, needle);
    let above = text.lines().nth(line as usize - 1).unwrap();
    assert_eq!(above.trim(), "with group(thread[1]):");
    (line - 1, (above.len() - above.trim_start().len()) as u32)
}

/// The `.cu` text `prism build` writes for `path`.
fn build_cuda(path: &Path) -> String {
    let out = path.with_extension("cu");
    let r = Command::new(env!("CARGO_BIN_EXE_prism")).arg("build").arg(path).arg("-o").arg(&out).output().expect("run");
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    std::fs::read_to_string(out).expect("read the .cu")
}

#[test]
fn inlay_hints_show_the_cuda_each_barrier_becomes() {
    let dir = project("cuda-hints");
    std::fs::write(dir.join("main.prism"), NAMED).expect("write");
    std::fs::write(dir.join("lib/shift.prism"), SHIFT).expect("write");
    let mut s = Server::start(&dir);
    let main = uri(&dir.join("main.prism"));
    s.open(&main, NAMED);
    let hints = barrier_hints(&mut s, &main);
    let at = |needle: &str, label: &str| {
        let (line, col) = before_group_of(NAMED, needle);
        (line, col, json!(label).to_string())
    };
    // The exact CUDA, the named barriers' ids and thread counts included; nothing from the
    // module's kernel, whose spans are offsets in another file.
    assert_eq!(
        hints,
        vec![
            at("mine[0] = s_w[", "bar.sync 1 + threadIdx.x / 64u, 64"),
            at("mine[0] = t_q[", "bar.sync 5 + threadIdx.x / 128u, 128"),
            at("mine[0] = e_w[", "__syncwarp(0xffu << (threadIdx.x & 24u))"),
        ]
    );
    // They are what `prism build` prints.
    let cu = build_cuda(&dir.join("main.prism"));
    assert!(cu.contains("\"r\"(1 + threadIdx.x / 64u), \"n\"(64)"), "{cu}");
    assert!(cu.contains("\"r\"(5 + threadIdx.x / 128u), \"n\"(128)"), "{cu}");
    assert!(cu.contains("__syncwarp(0xffu << (threadIdx.x & 24u));"), "{cu}");

    // The module, opened: barrier motion split its block barrier, so the hints are the two
    // halves where they stand (the arrive after the write, the wait before the read), and
    // none where inference first put it (before line 14).
    let module = uri(&dir.join("lib/shift.prism"));
    s.open(&module, SHIFT);
    let values = barrier_hint_values(&mut s, &module);
    let hints = barrier_hints(&mut s, &module);
    let arrive = "prism_tok0 = prism_split_arrive(prism_smem_addr(&prism_split[0]))";
    let wait = "prism_split_wait(prism_smem_addr(&prism_split[0]), prism_tok0)";
    let (w_line, w_col) = find(SHIFT, "mine[0] = S[");
    let (a_line, _) = find(SHIFT, "s_t[0] = src[g]");
    let a_end = SHIFT.lines().nth(a_line as usize).unwrap().len() as u32;
    assert_eq!(hints, vec![(a_line, a_end, json!(arrive).to_string()), (w_line, w_col, json!(wait).to_string())]);
    let tip = values[0]["tooltip"].as_str().unwrap();
    assert!(tip.starts_with("the arrive half of split block[1] barrier s0: its wait is on line 15."), "{tip}");
    assert!(tip.contains("block barrier inserted for `S`"), "{tip}");
    let tip = values[1]["tooltip"].as_str().unwrap();
    assert!(tip.starts_with("the wait half of split block[1] barrier s0: its arrive is on line 12."), "{tip}");
    let cu = build_cuda(&dir.join("lib/shift.prism"));
    assert!(cu.contains(&format!("{arrive};")) && cu.contains(&format!("{wait};")), "{cu}");
    s.stop();
}

/// `prism check --explain-sync` says, on each inferred barrier's note, what the hints show:
/// the CUDA the barrier became, or both halves motion split it into.
#[test]
fn explain_sync_names_the_cuda_the_hints_show() {
    let dir = project("explain-sync");
    std::fs::write(dir.join("main.prism"), NAMED).expect("write");
    std::fs::write(dir.join("lib/shift.prism"), SHIFT).expect("write");
    let check = |file: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_prism"))
            .args(["check", "--explain-sync", "--color", "never"])
            .arg(dir.join(file))
            .output()
            .expect("run prism check");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    let text = check("main.prism");
    for cuda in [
        "bar.sync 1 + threadIdx.x / 64u, 64",
        "bar.sync 5 + threadIdx.x / 128u, 128",
        "__syncwarp(0xffu << (threadIdx.x & 24u))",
    ] {
        assert!(text.contains(&format!("= note: in the CUDA: `{cuda}`")), "{text}");
    }
    let text = check("lib/shift.prism");
    assert!(
        text.contains(
            "= note: in the CUDA, barrier motion split it into `prism_tok0 = prism_split_arrive(prism_smem_addr(&prism_split[0]))` after line 12 and `prism_split_wait(prism_smem_addr(&prism_split[0]), prism_tok0)` before line 15"
        ),
        "{text}"
    );
}

/// A pipeline whose body turns: a ring of three slots, the next tile read after the turn.
const TURNING: &str = "\
@prism(\"global\")
@requires(grid[1], block[1], thread[1], smem=2048)
@launch_bounds(128)
def turning(n : int, x : ptr(const(float)), y : ptr(float)):
    b : int @ block[1] = id()
    with partition(y, p=block[1], f=lambda i: 128 * b + i) as y_b:
        with group(block[1]):
            ring : shared(float[3][128]) @ block[1]
            t : int @ thread[1] = id()
            acc : float @ thread[1] = 0.0
            for k in pipeline(n, stages=3):
                with fill(ring) as slot:
                    with group(thread[1]):
                        if t < 32:
                            cp_async(slot[4 * t], x[(b * n + k) * 128 + 4 * t], 16)
                with stage(ring) as s:
                    with group(thread[1]):
                        acc += s[127 - t]
                with stage(ring, next=True) as s_next:
                    with group(thread[1]):
                        acc += s_next[t]
            with partition(y_b, p=thread[1], f=lambda i: t + i) as y_t:
                with group(thread[1]):
                    y_t[0] = acc
";

#[test]
fn inlay_hints_show_a_pipelines_waits_and_barriers() {
    let dir = project("pipeline-hints");
    std::fs::write(dir.join("main.prism"), TURNING).expect("write");
    let mut s = Server::start(&dir);
    let main = uri(&dir.join("main.prism"));
    s.open(&main, TURNING);
    let values = barrier_hint_values(&mut s, &main);
    let hints = barrier_hints(&mut s, &main);
    let (top, top_col) = find(TURNING, "for k in pipeline(");
    let (turn, turn_col) = find(TURNING, "with stage(ring, next=True)");
    let label = json!("cp.async.wait_group 1; __syncthreads()").to_string();
    // The first tile's wait and barrier at the loop, every later tile's at the turn.
    assert_eq!(hints, vec![(top, top_col, label.clone()), (turn, turn_col, label)]);
    let tip = values[0]["tooltip"].as_str().unwrap();
    assert!(tip.contains("at the top of each tile's iteration (of the first tile only"), "{tip}");
    let tip = values[1]["tooltip"].as_str().unwrap();
    assert!(tip.contains("where its body turns"), "{tip}");
    // They are what `prism build` prints.
    let cu = build_cuda(&dir.join("main.prism"));
    assert_eq!(cu.matches("asm volatile(\"cp.async.wait_group 1;\" :  :  : \"memory\");").count(), 2, "{cu}");
    s.stop();
}

#[test]
fn inlay_hints_of_named_barriers_in_nested_splits() {
    let dir = project("split-hints");
    std::fs::write(dir.join("main.prism"), ROLES).expect("write");
    let mut s = Server::start(&dir);
    let main = uri(&dir.join("main.prism"));
    s.open(&main, ROLES);
    let hints = barrier_hints(&mut s, &main);
    let at = |needle: &str, label: &str| {
        let (line, col) = before_group_of(ROLES, needle);
        (line, col, json!(label).to_string())
    };
    assert_eq!(
        hints,
        vec![
            at("mine[0] = s_h[", "bar.sync 1 + threadIdx.x / 64u, 64"),
            at("mine[0] = t_q[", "bar.sync 5 + threadIdx.x / 128u, 128"),
        ]
    );
    // The tooltip says which ids the expression takes: the warpgroups' are 5 and 6.
    let values = barrier_hint_values(&mut s, &main);
    let tip = values[1]["tooltip"].as_str().unwrap();
    assert!(tip.contains("ids 5 to 6 are this unit size's, and 128 threads arrive at each"), "{tip}");
    let cu = build_cuda(&dir.join("main.prism"));
    assert!(cu.contains("\"r\"(1 + threadIdx.x / 64u), \"n\"(64)"), "{cu}");
    assert!(cu.contains("\"r\"(5 + threadIdx.x / 128u), \"n\"(128)"), "{cu}");
    s.stop();
}

#[test]
fn definition_and_references_cross_the_import() {
    let dir = project("definition");
    let mut s = Server::start(&dir);
    let main = uri(&dir.join("main.prism"));
    let util = uri(&dir.join("lib/util.prism"));
    s.open(&main, MAIN);
    let (line, col) = find(MAIN, "warp_total");
    let d = s.at("textDocument/definition", &main, line, col + 3);
    assert_eq!(d["result"]["uri"], util.as_str(), "{d}");
    assert_eq!(d["result"]["range"]["start"], json!({ "line": 3, "character": 4 }), "{d}");
    // References to the function, asked from its module: the kernel's call is found
    // through the kernel's own analysis.
    s.open(&util, UTIL);
    let r = s.at("textDocument/references", &util, 3, 6);
    let locs = r["result"].as_array().expect("references").clone();
    assert!(locs.iter().any(|l| l["uri"] == util.as_str() && l["range"]["start"]["line"] == 3), "{locs:?}");
    assert!(locs.iter().any(|l| l["uri"] == main.as_str() && l["range"]["start"]["line"] == line), "{locs:?}");
    // A variable: its declaration, the partition of it and the read in the loop.
    let (line, col) = find(MAIN, "partial : shared");
    let r = s.at("textDocument/references", &main, line, col);
    let lines: Vec<u64> =
        r["result"].as_array().unwrap().iter().map(|l| l["range"]["start"]["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, vec![12, 14, 23], "{r}");
    // A constant used in a type and a loop bound.
    let (line, col) = find(MAIN, "range(WARPS)");
    let d = s.at("textDocument/definition", &main, line, col + 7);
    assert_eq!(d["result"]["range"]["start"], json!({ "line": 3, "character": 0 }), "{d}");
    s.stop();
}

/// A kernel calling two standard library functions, one imported by name and one through
/// a module alias.
const STD_USER: &str = "\
from prism.std.warp import warp_sum
import prism.std.block as blk

@prism(\"global\")
@requires(grid[1], block[1], thread[32], smem=256)
def sums(vals : ptr(const(float)) @ grid[1], out : ptr(float) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as mine:
        with group(block[1]):
            total : float @ block[1] = blk.block_sum(vals[g])
            with group(warp[1]):
                x : float @ thread[32] = warp_sum[float](vals[g])
                with group(thread[1]):
                    mine[0] = x + total
";

/// The file a location points at, and the text of its line there from its column on.
fn text_at(loc: &Value) -> (PathBuf, String) {
    let path = PathBuf::from(loc["uri"].as_str().expect("a uri").strip_prefix("file://").expect("a file"));
    let text = std::fs::read_to_string(&path).expect("the file exists");
    let start = &loc["range"]["start"];
    let line = text.lines().nth(start["line"].as_u64().unwrap() as usize).expect("the line exists");
    (path, line[start["character"].as_u64().unwrap() as usize..].to_string())
}

#[test]
fn definition_goes_into_the_standard_library_written_to_the_cache() {
    let dir = project("std-definition");
    let main = uri(&dir.join("main.prism"));
    let mut s = Server::start(&dir);
    s.open(&main, STD_USER);
    let (line, col) = find(STD_USER, "warp_sum[float]");
    let d = s.at("textDocument/definition", &main, line, col + 2);
    let (warp, there) = text_at(&d["result"]);
    assert!(warp.starts_with(dir.join("cache/prism")), "{}", warp.display());
    assert!(warp.ends_with("prism/std/warp.prism"), "{}", warp.display());
    assert!(there.starts_with("warp_sum[T](v : T @ thread[1])"), "{there}");
    assert!(std::fs::metadata(&warp).unwrap().permissions().readonly());
    // Through a module alias, into another module.
    let (line, col) = find(STD_USER, "blk.block_sum");
    let d = s.at("textDocument/definition", &main, line, col + 5);
    let (block, there) = text_at(&d["result"]);
    assert!(block.ends_with("prism/std/block.prism") && there.starts_with("block_sum[T]("), "{d}");
    // References from the call: the definition in the cache file and the call itself.
    let (line, col) = find(STD_USER, "warp_sum[float]");
    let r = s.at("textDocument/references", &main, line, col);
    let locs = r["result"].as_array().expect("references").clone();
    assert!(locs.iter().any(|l| text_at(l).0 == warp), "{locs:?}");
    assert!(locs.iter().any(|l| l["uri"] == main.as_str() && l["range"]["start"]["line"] == line), "{locs:?}");
    // The cache file opened as a document: references to its function include the call in
    // the kernel, whose program loaded the same module under its bundled name.
    let warp_uri = uri(&warp);
    let warp_text = std::fs::read_to_string(&warp).unwrap();
    s.open(&warp_uri, &warp_text);
    let (def_line, def_col) = find(&warp_text, "def warp_sum[T]");
    let r = s.at("textDocument/references", &warp_uri, def_line, def_col + 5);
    let locs = r["result"].as_array().expect("references").clone();
    assert!(locs.iter().any(|l| l["uri"] == main.as_str() && l["range"]["start"]["line"] == line), "{locs:?}");
    s.stop();

    // Another server finds the file in place and leaves it alone; one whose contents
    // differ is written again.
    #[cfg(unix)]
    let inode = |p: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
    #[cfg(unix)]
    let before = inode(&warp);
    let good = std::fs::read_to_string(&warp).unwrap();
    let ask = |dir: &Path| {
        let mut s = Server::start(dir);
        s.open(&main, STD_USER);
        let (line, col) = find(STD_USER, "warp_sum[float]");
        let d = s.at("textDocument/definition", &main, line, col);
        s.stop();
        text_at(&d["result"])
    };
    let (again, _) = ask(&dir);
    assert_eq!(again, warp);
    #[cfg(unix)]
    assert_eq!(inode(&warp), before, "a file that matched was written again");
    let mut perms = std::fs::metadata(&warp).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)] // To spoil it, as a user might.
    perms.set_readonly(false);
    std::fs::set_permissions(&warp, perms).unwrap();
    std::fs::write(&warp, "# edited by hand\n").unwrap();
    let (_, there) = ask(&dir);
    assert!(there.starts_with("warp_sum[T]("), "{there}");
    assert_eq!(std::fs::read_to_string(&warp).unwrap(), good);
}

#[test]
fn document_symbols_list_functions_and_constants() {
    let dir = project("symbols");
    let mut s = Server::start(&dir);
    let main = uri(&dir.join("main.prism"));
    s.open(&main, MAIN);
    let r = s.request("textDocument/documentSymbol", json!({ "textDocument": { "uri": main } }));
    let syms = r["result"].as_array().expect("symbols");
    let names: Vec<(&str, u64, &str)> = syms
        .iter()
        .map(|x| (x["name"].as_str().unwrap(), x["kind"].as_u64().unwrap(), x["detail"].as_str().unwrap()))
        .collect();
    assert_eq!(names, vec![("WARPS", 14, "constexpr"), ("block_sums", 12, "kernel")]);
    assert_eq!(syms[1]["selectionRange"]["start"], json!({ "line": 7, "character": 4 }));
    s.stop();
}

#[test]
fn bad_input_gets_errors_or_empty_answers_never_a_crash() {
    let dir = project("bad");
    let mut s = Server::start(&dir);
    let main = uri(&dir.join("main.prism"));
    s.open(&main, MAIN);
    let r = s.request("textDocument/hover", json!({ "textDocument": 3 }));
    assert_eq!(r["error"]["code"], json!(-32602), "{r}");
    let r = s.request("textDocument/hover", json!(null));
    assert_eq!(r["error"]["code"], json!(-32602), "{r}");
    let r = s.request("prism/unknown", json!({}));
    assert_eq!(r["error"]["code"], json!(-32601), "{r}");
    let r = s.at("textDocument/hover", "file:///nowhere/unknown.prism", 0, 0);
    assert_eq!(r["result"], json!(null), "{r}");
    let r = s.at("textDocument/references", "untitled:x", 0, 0);
    assert_eq!(r["result"], json!([]), "{r}");
    for (line, ch) in [(9999, 0), (3, 9999), (u32::MAX, u32::MAX)] {
        let r = s.at("textDocument/hover", &main, line, ch);
        assert!(r.get("error").is_none(), "{r}");
        let r = s.at("textDocument/definition", &main, line, ch);
        assert!(r.get("error").is_none(), "{r}");
    }
    let r = s.request(
        "textDocument/inlayHint",
        json!({
            "textDocument": { "uri": main },
            "range": { "start": { "line": 50, "character": 0 }, "end": { "line": 2, "character": 0 } }
        }),
    );
    assert_eq!(r["result"], json!([]), "{r}");
    // Notifications that make no sense are dropped.
    s.notify("textDocument/didChange", json!({ "textDocument": { "uri": "file:///x", "version": 1 } }));
    s.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": main, "version": 7 }, "contentChanges": [
        { "range": { "start": { "line": 999, "character": 0 }, "end": { "line": 0, "character": 5 } }, "text": "# " }
    ] }),
    );
    s.notify("textDocument/didOpen", json!({ "textDocument": "nonsense" }));
    // A path that is not UTF-8, and a document that is not a file: analysed all the same.
    let odd = "file:///tmp/prism-%FF%FE/k.prism";
    s.open(odd, "@prism(\"global\")\ndef k(:\n");
    s.diagnostics(odd, |d| !d.is_empty());
    let untitled = "untitled:Untitled-1";
    s.open(untitled, MAIN);
    // Its import is looked for in the workspace root, which holds it.
    s.diagnostics(untitled, |d| d.is_empty());
    let r = s.at("textDocument/hover", odd, 1, 5);
    assert!(r.get("error").is_none(), "{r}");
    // The server still answers.
    let (line, col) = find(MAIN, "x : float @ thread[32]");
    let h = s.at("textDocument/hover", &main, line + 1, col);
    assert!(h.get("result").is_some(), "{h}");
    s.stop();
}

/// A document that is not a file has no directory: its imports are looked for in the
/// workspace root (`rootUri`, or else the first of `workspaceFolders`), not in the server's
/// working directory (the test's, which holds no `lib/util.prism`); an import missing there
/// says where it was looked for.
#[test]
fn an_untitled_document_imports_from_the_workspace_root() {
    let dir = project("untitled");
    for init in [
        json!({ "processId": null, "rootUri": uri(&dir), "capabilities": {} }),
        json!({ "processId": null, "rootUri": null, "workspaceFolders": [{ "uri": uri(&dir), "name": "p" }], "capabilities": {} }),
    ] {
        let mut s = Server::launch(&dir, Stdio::inherit());
        let r = s.request("initialize", init);
        assert!(r.get("result").is_some(), "{r}");
        s.notify("initialized", json!({}));
        s.open("untitled:Untitled-1", MAIN);
        s.diagnostics("untitled:Untitled-1", |d| d.is_empty());
        s.open("untitled:Untitled-2", &MAIN.replace("lib.util", "lib.missing"));
        let d = s.diagnostics("untitled:Untitled-2", |d| d.iter().any(|x| x["code"] == "unresolved-import"));
        let looked = dir.join("lib/missing.prism").display().to_string();
        assert!(d.iter().any(|x| x["message"].as_str().is_some_and(|m| m.contains(&looked))), "{d:?}");
        // Created there, the module clears the error.
        std::fs::write(dir.join("lib/missing.prism"), UTIL).expect("write the module");
        let created = uri(&dir.join("lib/missing.prism"));
        s.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": created, "type": 1 }] }));
        s.diagnostics("untitled:Untitled-2", |d| d.is_empty());
        std::fs::remove_file(dir.join("lib/missing.prism")).expect("remove the module");
        s.stop();
    }
}

/// `body` framed as a client frames it.
fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend(body);
    out
}

#[test]
fn bodies_that_are_not_messages_get_errors_and_the_server_goes_on() {
    let dir = project("garbage");
    let mut s = Server::start(&dir);
    let main = uri(&dir.join("main.prism"));
    s.open(&main, MAIN);
    let (line, col) = find(MAIN, "x : float @ thread[32]");
    let bodies: [(&[u8], i64); 9] = [
        (b"{not json", -32700),
        (b"", -32700),
        (b"\"\xff\xfe\"", -32700),
        (b"[1, 2]", -32600),
        (b"42", -32600),
        (b"{}", -32600),
        (br#"{"jsonrpc":"2.0","params":{}}"#, -32600),
        (br#"{"jsonrpc":"2.0","id":null,"method":"textDocument/hover"}"#, -32600),
        (br#"{"jsonrpc":"2.0","id":{"a":1},"method":"shutdown"}"#, -32600),
    ];
    for (body, code) in bodies {
        s.send_raw(&frame(body));
        let r = s.answer(&json!(null));
        assert_eq!(r["error"]["code"], json!(code), "{}: {r}", String::from_utf8_lossy(body));
        // The server still answers, and still has the document.
        let h = s.at("textDocument/hover", &main, line, col);
        let text = h["result"]["contents"]["value"].as_str().expect("a hover");
        assert!(text.contains("x : float @ thread[32]"), "{text}");
    }
    // A body with a usable id is answered with it.
    s.send_raw(&frame(br#"{"jsonrpc":"2.0","id":99,"method":7}"#));
    let r = s.answer(&json!(99));
    assert_eq!(r["error"]["code"], json!(-32600), "{r}");
    // Several in one write, between good messages.
    let mut bytes = frame(b"nonsense");
    bytes.extend(frame(br#"{"jsonrpc":"2.0","id":100,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"file:///nowhere.prism"}}}"#));
    bytes.extend(frame(b"[]"));
    s.send_raw(&bytes);
    assert_eq!(s.answer(&json!(100))["result"], json!(null));
    assert_eq!(s.answer(&json!(null))["error"]["code"], json!(-32700));
    assert_eq!(s.answer(&json!(null))["error"]["code"], json!(-32600));
    s.stop();
}

#[test]
fn broken_framing_ends_the_server_with_a_message_never_a_panic_or_a_hang() {
    let dir = project("framing");
    // The bytes, whether stdin is then closed, and what stderr says. With stdin left open
    // the server must still exit: it cannot find the next message.
    let cases: [(&[u8], bool, &str); 8] = [
        (b"Content-Type: application/vscode-jsonrpc\r\n\r\n{}", false, "a message has no Content-Length header"),
        (b"Content-Length: twelve\r\n\r\n{}", false, "the Content-Length `twelve` is not a number"),
        (b"Content-Length: 2\n\n{}", false, "the header line `Content-Length: 2` does not end with \\r\\n"),
        (b"garbage\r\n\r\n", false, "the header line `garbage` is not `Name: value`"),
        (
            b"Content-Length: 1000000000000\r\n\r\n{}",
            false,
            "a message of 1000000000000 bytes is over the limit of 67108864 bytes (64 MiB)",
        ),
        (
            b"Content-Length: 67108865\r\n\r\n",
            false,
            "a message of 67108865 bytes is over the limit of 67108864 bytes (64 MiB)",
        ),
        (b"Content-Length: 100\r\n\r\n{\"jsonrpc\"", true, "the input ended after 10 bytes of a message of 100 bytes"),
        (b"Content-Len", true, "the input ended inside a message's header"),
    ];
    for (bytes, close, says) in cases {
        let mut s = Server::launch(&dir, Stdio::piped());
        s.initialize(&dir, json!({}));
        // A request just before the break is still answered.
        let mut all = frame(br#"{"jsonrpc":"2.0","id":50,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"file:///nowhere.prism"}}}"#);
        all.extend(bytes);
        s.send_raw(&all);
        let (status, err) = s.end(close);
        assert_eq!(status.code(), Some(2), "{says}: {status}, stderr {err}");
        assert_eq!(err, format!("error: language server: {says}\n"));
        assert!(s.answer(&json!(50)).get("result").is_some());
    }
}

#[test]
fn exit_codes_follow_the_protocol() {
    let dir = project("exit");
    // `shutdown` then `exit`: 0 (`Server::stop`); `shutdown` then the end of the input: 0.
    let s = Server::start(&dir);
    s.stop();
    let mut s = Server::launch(&dir, Stdio::piped());
    s.initialize(&dir, json!({}));
    assert_eq!(s.request("shutdown", json!(null))["result"], json!(null));
    let (status, err) = s.end(true);
    assert_eq!((status.code(), err.as_str()), (Some(0), ""));
    // `exit` without `shutdown`: 1, also before `initialize`.
    for init in [true, false] {
        let mut s = Server::launch(&dir, Stdio::piped());
        if init {
            s.initialize(&dir, json!({}));
        }
        s.notify("exit", json!(null));
        let (status, err) = s.end(false);
        assert_eq!(status.code(), Some(1), "{err}");
        assert_eq!(err, "error: language server: `exit` came without `shutdown`\n");
    }
    // The end of the input without `shutdown`: 1, also before `initialize`.
    for init in [true, false] {
        let mut s = Server::launch(&dir, Stdio::piped());
        if init {
            s.initialize(&dir, json!({}));
        }
        let (status, err) = s.end(true);
        assert_eq!(status.code(), Some(1), "{err}");
        assert_eq!(err, "error: language server: the input ended without `shutdown`\n");
    }
}

#[test]
fn requests_before_initialize_and_after_shutdown_are_refused() {
    let dir = project("lifecycle");
    let main = uri(&dir.join("main.prism"));
    let mut s = Server::launch(&dir, Stdio::inherit());
    let r = s.at("textDocument/hover", &main, 0, 0);
    assert_eq!(r["error"]["code"], json!(-32002), "{r}");
    let r = s.request("shutdown", json!(null));
    assert_eq!(r["error"]["code"], json!(-32002), "{r}");
    // Notifications before `initialize` are dropped.
    s.open(&main, MAIN);
    s.initialize(&dir, json!({}));
    let r = s.request("initialize", json!({ "capabilities": {} }));
    assert_eq!(r["error"]["code"], json!(-32600), "{r}");
    s.open(&main, MAIN);
    s.diagnostics(&main, |d| d.is_empty());
    let r = s.request("shutdown", json!(null));
    assert_eq!(r["result"], json!(null), "{r}");
    let r = s.at("textDocument/hover", &main, 9, 4);
    assert_eq!(r["error"]["code"], json!(-32600), "{r}");
    let r = s.request("shutdown", json!(null));
    assert_eq!(r["error"]["code"], json!(-32600), "{r}");
    let r = s.request("prism/unknown", json!({}));
    assert_eq!(r["error"]["code"], json!(-32600), "{r}");
    s.notify("exit", json!(null));
    let (status, _) = s.end(false);
    assert!(status.success(), "the server exited with {status}");
}

#[test]
fn creating_a_missing_module_refreshes_its_importers() {
    let dir = project("created");
    std::fs::remove_file(dir.join("lib/util.prism")).expect("remove the module");
    let mut s = Server::start(&dir);
    let main = uri(&dir.join("main.prism"));
    let util = uri(&dir.join("lib/util.prism"));
    let unresolved = |d: &[Value]| d.iter().any(|x| x["code"] == "unresolved-import");
    s.open(&main, MAIN);
    s.diagnostics(&main, unresolved);
    // Made in the editor and not saved yet: the open document resolves the import.
    s.open(&util, UTIL);
    s.diagnostics(&main, |d| d.is_empty());
    // Closed without saving: the import is unresolved again.
    s.notify("textDocument/didClose", json!({ "textDocument": { "uri": util } }));
    s.diagnostics(&main, unresolved);
    // Created on disk, as the client's file watcher reports.
    std::fs::write(dir.join("lib/util.prism"), UTIL).expect("write the module");
    s.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": util, "type": 1 }] }));
    s.diagnostics(&main, |d| d.is_empty());
    s.stop();
}

/// Review R57: closing a document cleared nothing, so the client kept its errors for a
/// file the server no longer analyses; and closing one of two URIs that name one file
/// (one spelled with an escape) dropped the other's unsaved text from what imports see.
#[test]
fn closing_clears_diagnostics_and_keeps_another_uris_text() {
    let dir = project("closing");
    let mut s = Server::start(&dir);
    let scratch = uri(&dir.join("scratch.prism"));
    s.open(&scratch, "def oops(:\n");
    s.diagnostics(&scratch, |d| !d.is_empty());
    s.notify("textDocument/didClose", json!({ "textDocument": { "uri": scratch } }));
    s.diagnostics(&scratch, |d| d.is_empty());
    let main = uri(&dir.join("main.prism"));
    let util = uri(&dir.join("lib/util.prism"));
    let alias = uri(&dir.join("lib/%75til.prism"));
    s.open(&main, MAIN);
    s.diagnostics(&main, |d| d.is_empty());
    // Unsaved and broken under one URI: the importer shows it.
    s.open(&util, "def (:\n");
    s.diagnostics(&main, |d| !d.is_empty());
    // The same file opened under the other URI with the text on disk, then closed: the
    // first URI's unsaved text is what the import reads again.
    s.open(&alias, UTIL);
    s.diagnostics(&main, |d| d.is_empty());
    s.notify("textDocument/didClose", json!({ "textDocument": { "uri": alias } }));
    s.diagnostics(&main, |d| !d.is_empty());
    s.stop();
}

/// A diagnostic as both sides can say it: code, title, 0-based line and column of the
/// primary span.
type Said = (String, String, u64, u64);

/// The diagnostics of `prism check --message-format json FILE`.
fn check_json(path: &Path) -> Vec<Said> {
    let out = Command::new(env!("CARGO_BIN_EXE_prism"))
        .args(["check", "--message-format", "json"])
        .arg(path)
        .output()
        .expect("run prism check");
    let mut v: Vec<_> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let d: Value = serde_json::from_str(l).expect("a JSON line");
            let n = |k: &str| d[k].as_u64().expect("a number") - 1;
            (
                d["code"].as_str().unwrap().to_string(),
                d["message"].as_str().unwrap().to_string(),
                n("line"),
                n("column"),
            )
        })
        .collect();
    v.sort();
    v
}

fn lsp_diagnostics(d: &[Value]) -> Vec<Said> {
    let mut v: Vec<_> = d
        .iter()
        .map(|x| {
            let title = x["message"].as_str().unwrap().lines().next().unwrap_or_default().to_string();
            let at = |k: &str| x["range"]["start"][k].as_u64().unwrap();
            (x["code"].as_str().unwrap().to_string(), title, at("line"), at("character"))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn diagnostics_are_those_of_prism_check_across_the_ui_corpus() {
    // Every rejected program of the corpus, and the accepted programs of `rules/` (some with
    // warnings): the server, once inference has run, reports what `prism check` reports.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ui");
    let mut files = Vec::new();
    let mut stack = vec![root.join("reject"), root.join("accept/rules")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("the corpus").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "prism") {
                files.push(std::fs::canonicalize(&p).expect("a path"));
            }
        }
    }
    // Files that are not UTF-8 on purpose cannot be sent over the protocol.
    files.retain(|p| std::fs::read_to_string(p).is_ok());
    files.sort();
    let expected: Vec<(String, Vec<Said>)> = files.iter().map(|p| (uri(p), check_json(p))).collect();
    assert!(expected.len() > 200, "only {} programs", expected.len());
    assert!(expected.iter().any(|(_, e)| e.iter().any(|d| d.0 == "unplaceable-barrier")));
    let dir = project("corpus");
    let caps = json!({ "workspace": { "inlayHint": { "refreshSupport": true } } });
    let mut s = Server::start_with(&dir, caps);
    for p in &files {
        s.open(&uri(p), &std::fs::read_to_string(p).expect("UTF-8 text"));
    }
    // Publications come after the front end and again after inference, which is followed
    // by a request to refresh the inlay hints: wait until every document's last
    // publication is `prism check`'s, or until the server has been quiet for a while.
    let mut last: std::collections::HashMap<String, Vec<Said>> = Default::default();
    let mut refreshed = false;
    let done = |last: &std::collections::HashMap<_, _>| expected.iter().all(|(u, e)| last.get(u) == Some(e));
    while !(refreshed && done(&last)) {
        let Some(m) = s.try_recv(Duration::from_secs(10)) else { break };
        if m["method"] == "textDocument/publishDiagnostics" {
            let d = m["params"]["diagnostics"].as_array().cloned().unwrap_or_default();
            last.insert(m["params"]["uri"].as_str().unwrap().to_string(), lsp_diagnostics(&d));
        } else if m["method"] == "workspace/inlayHint/refresh" {
            refreshed = true;
            s.send(&json!({ "jsonrpc": "2.0", "id": m["id"], "result": null }));
        }
    }
    assert!(refreshed, "the server did not ask for the inlay hints to be refreshed");
    for (u, e) in &expected {
        assert_eq!(last.get(u), Some(e), "the diagnostics of {u}");
    }
    s.stop();
}
