//! How long the language server takes to re-check a 5,000-line document after an edit.
//!
//! `cargo bench -p prism_lsp --bench recheck` prints the figures `BENCHMARKS.md` records:
//! the parts of one analysis (the front end with the name index, synchronisation
//! inference on top, the conversion of diagnostics and inlay hints), and the whole round
//! trip through the server over an in-memory connection: a `didChange` with the full text
//! sent, until the `publishDiagnostics` for that version arrives. That first publication
//! comes after the front end; inference follows once the client is quiet
//! (`prism_lsp::SYNC_DELAY`), and its cost is the second line. The program is `prism_test::r#gen`'s
//! (kernel libraries and kernels that check without diagnostics); each edit changes its
//! first `0.0` to another constant, so every run checks a different text of the same size.

#![allow(clippy::print_stdout)] // A benchmark reports on stdout.

use lsp_server::{Connection, Message, Notification, Request, RequestId};
use prism_lsp::analysis::{self, Settings};
use serde_json::json;
use std::time::{Duration, Instant};

const LINES: usize = 5000;
const RUNS: usize = 21;

fn main() {
    let src = prism_test::r#gen::generate(LINES, 1);
    let lines = src.lines().count();
    let settings = Settings::default();
    let mut files = prism_driver::NoFiles;
    let first = analysis::analyse("bench.prism", true, &src, &mut files, &settings);
    let barriers = first.sync().inferred.as_ref().map_or(0, |r| r.report.barriers.len());
    let all = first.all_problems();
    assert!(all.is_empty(), "the generated program has diagnostics: {:?}", all.first());
    println!("document: {lines} lines, {} functions, {barriers} inferred barriers", first.analysis.tir.functions.len());
    let uri = lsp_types::Url::parse("file:///bench/bench.prism").expect("a URI");

    let mut front = Vec::new();
    let mut sync = Vec::new();
    let mut convert = Vec::new();
    for i in 0..RUNS {
        let text = edited(&src, i);
        let t = Instant::now();
        let s = analysis::analyse("bench.prism", true, &text, &mut files, &settings);
        front.push(t.elapsed());
        let t = Instant::now();
        s.sync();
        sync.push(t.elapsed());
        let t = Instant::now();
        let d = prism_lsp::features::diagnostics(&s, &uri);
        let h = prism_lsp::features::inlay_hints(&s, whole());
        convert.push(t.elapsed());
        assert!(d.is_empty() && h.len() >= barriers);
    }
    let server = round_trips(&src, &uri);
    println!("median (best) of {RUNS} runs, ms:");
    report("front end (load, parse, check, index)", &mut front);
    report("synchronisation inference (lower, infer)", &mut sync);
    report("diagnostics + all inlay hints", &mut convert);
    let mut server = server;
    report("server round trip: didChange -> publishDiagnostics", &mut server);
    let median = server[server.len() / 2];
    let verdict =
        if median < Duration::from_millis(50) { "under 50 ms: target met" } else { "over 50 ms: target missed" };
    println!("re-check of {lines} lines through the server: {:.1} ms median, {verdict}", ms(median));
}

/// The generated program with one constant changed, different for each `i`.
fn edited(src: &str, i: usize) -> String {
    src.replacen("0.0", &format!("{}.0", i % 7), 1)
}

fn whole() -> lsp_types::Range {
    lsp_types::Range { start: lsp_types::Position::new(0, 0), end: lsp_types::Position::new(u32::MAX, 0) }
}

/// Times `didChange` → `publishDiagnostics` through a server on an in-memory connection.
fn round_trips(src: &str, uri: &lsp_types::Url) -> Vec<Duration> {
    let (server, client) = Connection::memory();
    let thread = std::thread::spawn(move || prism_lsp::serve(&server));
    let init = Request::new(RequestId::from(1), "initialize".into(), json!({ "capabilities": {} }));
    client.sender.send(Message::Request(init)).expect("send");
    let _ = client.receiver.recv().expect("initialize response");
    notify(&client, "initialized", json!({}));
    notify(
        &client,
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "prism", "version": 0, "text": src } }),
    );
    wait_for_version(&client, 0);
    let mut times = Vec::new();
    for i in 0..RUNS {
        let version = i as i32 + 1;
        let text = edited(src, i);
        let t = Instant::now();
        notify(
            &client,
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] }),
        );
        wait_for_version(&client, version);
        times.push(t.elapsed());
    }
    let shutdown = Request::new(RequestId::from(2), "shutdown".into(), json!(null));
    client.sender.send(Message::Request(shutdown)).expect("send");
    let _ = client.receiver.recv();
    notify(&client, "exit", json!(null));
    thread.join().expect("the server thread").expect("the server");
    times
}

fn notify(client: &Connection, method: &str, params: serde_json::Value) {
    client.sender.send(Message::Notification(Notification::new(method.into(), params))).expect("send");
}

fn wait_for_version(client: &Connection, version: i32) {
    loop {
        if let Message::Notification(n) = client.receiver.recv().expect("a message")
            && n.method == "textDocument/publishDiagnostics"
            && n.params["version"] == version
        {
            assert_eq!(n.params["diagnostics"].as_array().map(Vec::len), Some(0));
            return;
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn report(what: &str, times: &mut [Duration]) {
    times.sort();
    println!("  {what:<52} {:>7.1} ({:.1})", ms(times[times.len() / 2]), ms(times[0]));
}
