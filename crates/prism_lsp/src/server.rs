//! The server loop: documents, when to analyse them, and the protocol's requests and
//! notifications.
//!
//! Analysis is on demand, coalesced, and in two steps. A change only records the new text
//! and marks the document (and every open document whose program loaded it) stale; stale
//! documents go through the front end when no message is waiting, and their diagnostics
//! are published then, so a burst of keystrokes costs one check. Synchronisation inference,
//! which costs as much again, runs once the client has been quiet for [`SYNC_DELAY`] (then
//! the diagnostics are published again, with inference's errors, and the client is asked
//! to refresh its inlay hints), or at once when an inlay-hint request needs its barriers.
//! A request about a stale document analyses it first, so an answer always matches the
//! text the client has. Each analysis is kept until the next change and answers every
//! request in between.
//!
//! Nothing a client sends may bring the server down: a body that is not a message is
//! answered by the transport ([`crate::transport`]), a request before `initialize` is a
//! `ServerNotInitialized` error and one after `shutdown` an `InvalidRequest` error,
//! parameters that do not parse are an `InvalidParams` error, an unknown document gets an
//! empty answer, positions are clamped, and a panic in a handler (an internal compiler
//! error) becomes an `InternalError` response while the server goes on. The session ends
//! at `exit` or at the end of the input, as an [`Ending`] that says whether `shutdown`
//! came first.

use crate::analysis::{self, Settings, Snapshot};
use crate::features;
use crate::files::{Overlay, normalise};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types as lsp;
use lsp_types::Url;
use lsp_types::notification::Notification as _;
use lsp_types::request::Request as _;
use serde_json::Value;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

/// How long the client must be quiet before synchronisation inference runs on the
/// documents whose text changed (`docs/editors.md`, "Incrementality").
pub const SYNC_DELAY: Duration = Duration::from_millis(150);

/// How a session ended, which decides `prism lsp`'s exit code: the protocol asks for 0
/// after `shutdown` and 1 otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// `shutdown`, then `exit` or the end of the input: exit code 0.
    ShutDown,
    /// `exit` without `shutdown` first: exit code 1.
    ExitWithoutShutdown,
    /// The input ended without `shutdown`: exit code 1.
    InputEnded,
}

/// Serves the protocol on stdin and stdout ([`crate::transport`]) until the client ends
/// the session; `Err` when the input's framing broke or the client went away.
pub fn run_stdio() -> Result<Ending, String> {
    let (connection, transport) = crate::transport::stdio();
    let res = serve(&connection);
    drop(connection);
    // The reader has stopped when the server saw `exit` or the input close (`Ok`); after
    // an error writing it may still be waiting for input.
    transport.join(res.is_ok())?;
    res
}

/// Serves the protocol on `connection`: the handshake, then requests and notifications
/// until `exit` or until the client goes away.
pub fn serve(connection: &Connection) -> Result<Ending, String> {
    let init = match handshake(connection)? {
        Ok(init) => init,
        Err(ending) => return Ok(ending),
    };
    let refresh = init["capabilities"]["workspace"]["inlayHint"]["refreshSupport"].as_bool() == Some(true);
    let mut server = Server {
        docs: HashMap::new(),
        overlay: HashMap::new(),
        settings: settings(&init),
        refresh,
        next_id: 0,
        shut_down: false,
        closed: Vec::new(),
    };
    server.run(connection)
}

/// Waits for `initialize` and answers it: its parameters, or how the session ended before
/// it. Other requests get `ServerNotInitialized`, other notifications are dropped (as the
/// protocol asks); `initialized` is not waited for.
fn handshake(connection: &Connection) -> Result<Result<Value, Ending>, String> {
    loop {
        let Ok(msg) = connection.receiver.recv() else { return Ok(Err(Ending::InputEnded)) };
        match msg {
            Message::Request(req) if req.method == lsp::request::Initialize::METHOD => {
                let caps = serde_json::to_value(capabilities()).map_err(|e| e.to_string())?;
                send(
                    connection,
                    Message::Response(Response::new_ok(req.id, serde_json::json!({ "capabilities": caps }))),
                )?;
                return Ok(Ok(req.params));
            }
            Message::Request(req) => {
                let code = ErrorCode::ServerNotInitialized as i32;
                let resp = Response::new_err(req.id, code, "the server is not initialised yet".into());
                send(connection, Message::Response(resp))?;
            }
            Message::Notification(n) if n.method == lsp::notification::Exit::METHOD => {
                return Ok(Err(Ending::ExitWithoutShutdown));
            }
            Message::Notification(_) | Message::Response(_) => {}
        }
    }
}

/// What the server can do.
fn capabilities() -> lsp::ServerCapabilities {
    lsp::ServerCapabilities {
        text_document_sync: Some(lsp::TextDocumentSyncCapability::Kind(lsp::TextDocumentSyncKind::FULL)),
        hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
        definition_provider: Some(lsp::OneOf::Left(true)),
        references_provider: Some(lsp::OneOf::Left(true)),
        document_symbol_provider: Some(lsp::OneOf::Left(true)),
        inlay_hint_provider: Some(lsp::OneOf::Left(true)),
        ..lsp::ServerCapabilities::default()
    }
}

/// The settings from `initializationOptions`: `{"arch": "sm_80", "include": ["dir", ...]}`,
/// include directories relative to the workspace root (`rootUri`, or else the first of
/// `workspaceFolders`). Anything malformed is ignored.
fn settings(init: &Value) -> Settings {
    let mut s = Settings::default();
    let opts = &init["initializationOptions"];
    if let Some(t) = opts["arch"].as_str().and_then(prism_types::Target::from_arch) {
        s.target = t;
    }
    let dir = |u: &Value| u.as_str().and_then(|u| Url::parse(u).ok()).and_then(|u| u.to_file_path().ok());
    s.root = dir(&init["rootUri"]).or_else(|| dir(&init["workspaceFolders"][0]["uri"]));
    if let Some(dirs) = opts["include"].as_array() {
        for d in dirs.iter().filter_map(Value::as_str) {
            let p = PathBuf::from(d);
            s.include.push(match &s.root {
                Some(r) if p.is_relative() => r.join(p),
                _ => p,
            });
        }
    }
    s
}

/// An open document.
struct Doc {
    text: String,
    version: i32,
    /// Its path, for a `file:` URI.
    path: Option<PathBuf>,
    /// The last analysis, if still current.
    snap: Option<Rc<Snapshot>>,
    /// Whether its diagnostics were published since the last analysis.
    published: bool,
    /// Whether its diagnostics were published since inference ran on the last analysis.
    published_synced: bool,
}

struct Server {
    docs: HashMap<Url, Doc>,
    /// The open documents with a path, by normalised path: what imports see.
    overlay: HashMap<PathBuf, String>,
    settings: Settings,
    /// Whether the client takes `workspace/inlayHint/refresh` requests.
    refresh: bool,
    /// The id of the next request to the client.
    next_id: i32,
    /// Whether `shutdown` was received: every later request is refused, and nothing more
    /// is analysed or published.
    shut_down: bool,
    /// Documents closed since the last flush: their diagnostics are cleared (an empty
    /// list published), or the client would keep showing them for a file the server no
    /// longer analyses.
    closed: Vec<Url>,
}

/// A failed request: the error code and message.
type Failure = (ErrorCode, String);

impl Server {
    fn run(&mut self, connection: &Connection) -> Result<Ending, String> {
        let input_ended = |s: &Server| if s.shut_down { Ending::ShutDown } else { Ending::InputEnded };
        loop {
            let msg = if !self.shut_down && self.docs.values().any(|d| !d.published_synced) {
                match connection.receiver.recv_timeout(SYNC_DELAY) {
                    Ok(m) => m,
                    Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                        self.sync_all(connection)?;
                        continue;
                    }
                    Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return Ok(input_ended(self)),
                }
            } else {
                match connection.receiver.recv() {
                    Ok(m) => m,
                    Err(_) => return Ok(input_ended(self)),
                }
            };
            match msg {
                Message::Request(req) => {
                    let resp = if self.shut_down {
                        let code = ErrorCode::InvalidRequest as i32;
                        Response::new_err(req.id, code, "the server is shut down: only `exit` is expected".into())
                    } else if req.method == lsp::request::Shutdown::METHOD {
                        self.shut_down = true;
                        Response::new_ok(req.id, ())
                    } else {
                        self.request(req)
                    };
                    send(connection, Message::Response(resp))?;
                }
                Message::Notification(n) => {
                    if n.method == lsp::notification::Exit::METHOD {
                        return Ok(if self.shut_down { Ending::ShutDown } else { Ending::ExitWithoutShutdown });
                    }
                    if !self.shut_down {
                        // A bad notification cannot be answered; it is dropped.
                        let _ = catch_unwind(AssertUnwindSafe(|| self.notification(n)));
                    }
                }
                Message::Response(_) => {}
            }
            if !self.shut_down && connection.receiver.is_empty() {
                self.flush(connection)?;
            }
        }
    }

    /// Analyses every stale document and publishes the diagnostics not yet published.
    fn flush(&mut self, connection: &Connection) -> Result<(), String> {
        for uri in std::mem::take(&mut self.closed) {
            // Opened again since: its own diagnostics follow.
            if !self.docs.contains_key(&uri) {
                publish(connection, lsp::PublishDiagnosticsParams { uri, diagnostics: Vec::new(), version: None })?;
            }
        }
        let uris: Vec<Url> = self.docs.iter().filter(|(_, d)| !d.published).map(|(u, _)| u.clone()).collect();
        for uri in uris {
            self.publish(connection, &uri)?;
        }
        Ok(())
    }

    /// Runs inference on every document whose diagnostics lack it, publishes them again,
    /// and asks the client to refresh its inlay hints.
    fn sync_all(&mut self, connection: &Connection) -> Result<(), String> {
        let uris: Vec<Url> = self.docs.iter().filter(|(_, d)| !d.published_synced).map(|(u, _)| u.clone()).collect();
        for uri in &uris {
            if let Some(snap) = self.snapshot(uri) {
                // A panic (an internal compiler error) leaves the snapshot without
                // inference; the diagnostics say what the front end found.
                let _ = catch_unwind(AssertUnwindSafe(|| snap.sync()));
            }
            self.publish(connection, uri)?;
            if let Some(d) = self.docs.get_mut(uri) {
                d.published_synced = true;
            }
        }
        if self.refresh && !uris.is_empty() {
            self.next_id += 1;
            let id = lsp_server::RequestId::from(format!("prism-refresh-{}", self.next_id));
            let req = Request::new(id, lsp::request::InlayHintRefreshRequest::METHOD.into(), Value::Null);
            send(connection, Message::Request(req))?;
        }
        Ok(())
    }

    /// Publishes the diagnostics of `uri`, analysing it first if it is stale.
    fn publish(&mut self, connection: &Connection, uri: &Url) -> Result<(), String> {
        let Some(snap) = self.snapshot(uri) else { return Ok(()) };
        let Some(doc) = self.docs.get_mut(uri) else { return Ok(()) };
        doc.published = true;
        doc.published_synced = snap.synced();
        let diagnostics = catch_unwind(AssertUnwindSafe(|| features::diagnostics(&snap, uri))).unwrap_or_default();
        let params = lsp::PublishDiagnosticsParams { uri: uri.clone(), diagnostics, version: Some(doc.version) };
        publish(connection, params)
    }

    /// The current analysis of `uri`, made now if the document changed since the last;
    /// `None` for a document that is not open, or when analysing it panicked.
    fn snapshot(&mut self, uri: &Url) -> Option<Rc<Snapshot>> {
        let doc = self.docs.get(uri)?;
        if let Some(s) = &doc.snap {
            return Some(s.clone());
        }
        let name = match &doc.path {
            Some(p) => p.display().to_string(),
            None => uri.to_string(),
        };
        let is_file = doc.path.is_some();
        let mut files = Overlay { docs: &self.overlay };
        let snap =
            catch_unwind(AssertUnwindSafe(|| analysis::analyse(&name, is_file, &doc.text, &mut files, &self.settings)))
                .ok()?;
        let snap = Rc::new(snap);
        let doc = self.docs.get_mut(uri)?;
        doc.snap = Some(snap.clone());
        doc.published = false;
        doc.published_synced = false;
        Some(snap)
    }

    /// Marks `uri` stale, and every open document whose program loaded the file at `path`
    /// or looked for an import there (a module opened before it exists on disk).
    fn changed(&mut self, uri: &Url, path: Option<&PathBuf>) {
        for (u, d) in self.docs.iter_mut() {
            let loads = path.is_some_and(|p| d.snap.as_ref().is_some_and(|s| s.depends_on(p)));
            if u == uri || loads {
                d.snap = None;
                d.published = false;
                d.published_synced = false;
            }
        }
    }

    fn notification(&mut self, n: Notification) {
        use lsp::notification as N;
        match n.method.as_str() {
            N::DidOpenTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<lsp::DidOpenTextDocumentParams>(n.params) else { return };
                let path = doc_path(&p.text_document.uri);
                if let Some(path) = &path {
                    self.overlay.insert(path.clone(), p.text_document.text.clone());
                }
                let uri = p.text_document.uri;
                let doc = Doc {
                    text: p.text_document.text,
                    version: p.text_document.version,
                    path: path.clone(),
                    snap: None,
                    published: false,
                    published_synced: false,
                };
                self.docs.insert(uri.clone(), doc);
                self.changed(&uri, path.as_ref());
            }
            N::DidChangeTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<lsp::DidChangeTextDocumentParams>(n.params) else { return };
                let uri = p.text_document.uri;
                let Some(doc) = self.docs.get_mut(&uri) else { return };
                for c in p.content_changes {
                    apply(&mut doc.text, c);
                }
                doc.version = p.text_document.version;
                let path = doc.path.clone();
                if let Some(path) = &path {
                    self.overlay.insert(path.clone(), doc.text.clone());
                }
                self.changed(&uri, path.as_ref());
            }
            N::DidCloseTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<lsp::DidCloseTextDocumentParams>(n.params) else { return };
                let uri = p.text_document.uri;
                let Some(doc) = self.docs.remove(&uri) else { return };
                if let Some(path) = &doc.path {
                    // Two URIs may name one file (spelled or escaped differently): while
                    // another stays open, imports see its text, not the disk's.
                    match self.docs.values().find(|d| d.path.as_ref() == Some(path)) {
                        Some(other) => self.overlay.insert(path.clone(), other.text.clone()),
                        None => self.overlay.remove(path),
                    };
                }
                self.changed(&uri, doc.path.as_ref());
                self.closed.push(uri);
            }
            // A module changed on disk: any program may have loaded it.
            N::DidChangeWatchedFiles::METHOD | N::DidSaveTextDocument::METHOD => {
                for d in self.docs.values_mut() {
                    d.snap = None;
                    d.published = false;
                    d.published_synced = false;
                }
            }
            _ => {}
        }
    }

    fn request(&mut self, req: Request) -> Response {
        let id = req.id.clone();
        match catch_unwind(AssertUnwindSafe(|| self.dispatch(req))) {
            Ok(Ok(v)) => Response::new_ok(id, v),
            Ok(Err((code, message))) => Response::new_err(id, code as i32, message),
            Err(_) => {
                Response::new_err(id, ErrorCode::InternalError as i32, "internal error: the server panicked".into())
            }
        }
    }

    fn dispatch(&mut self, req: Request) -> Result<Value, Failure> {
        use lsp::request as R;
        match req.method.as_str() {
            R::HoverRequest::METHOD => {
                let p: lsp::HoverParams = params(req.params)?;
                let d = p.text_document_position_params;
                let Some(snap) = self.snapshot(&d.text_document.uri) else { return Ok(Value::Null) };
                json(features::hover(&snap, d.position))
            }
            R::GotoDefinition::METHOD => {
                let p: lsp::GotoDefinitionParams = params(req.params)?;
                let d = p.text_document_position_params;
                let uri = d.text_document.uri;
                let Some(snap) = self.snapshot(&uri) else { return Ok(Value::Null) };
                json(features::definition(&snap, &uri, d.position).map(lsp::GotoDefinitionResponse::Scalar))
            }
            R::References::METHOD => {
                let p: lsp::ReferenceParams = params(req.params)?;
                let d = p.text_document_position;
                let Some(snap) = self.snapshot(&d.text_document.uri) else { return json(Vec::<lsp::Location>::new()) };
                let Some(key) = features::def_key_at(&snap, d.position) else {
                    return json(Vec::<lsp::Location>::new());
                };
                // Every open document's program: a module's function is used by the
                // kernels that import it, which its own analysis does not see.
                let uris: Vec<Url> = self.docs.keys().cloned().collect();
                let mut out: Vec<lsp::Location> = Vec::new();
                for u in uris {
                    let Some(s) = self.snapshot(&u) else { continue };
                    for l in features::references(&s, &u, &key, p.context.include_declaration) {
                        if !out.contains(&l) {
                            out.push(l);
                        }
                    }
                }
                out.sort_by(|a, b| {
                    (a.uri.as_str(), a.range.start.line, a.range.start.character).cmp(&(
                        b.uri.as_str(),
                        b.range.start.line,
                        b.range.start.character,
                    ))
                });
                json(out)
            }
            R::DocumentSymbolRequest::METHOD => {
                let p: lsp::DocumentSymbolParams = params(req.params)?;
                let Some(snap) = self.snapshot(&p.text_document.uri) else { return Ok(Value::Null) };
                json(lsp::DocumentSymbolResponse::Nested(features::symbols(&snap)))
            }
            R::InlayHintRequest::METHOD => {
                let p: lsp::InlayHintParams = params(req.params)?;
                let Some(snap) = self.snapshot(&p.text_document.uri) else { return json(Vec::<lsp::InlayHint>::new()) };
                json(features::inlay_hints(&snap, p.range))
            }
            R::Initialize::METHOD => Err((ErrorCode::InvalidRequest, "the server is already initialised".into())),
            m => Err((ErrorCode::MethodNotFound, format!("unknown method `{m}`"))),
        }
    }
}

/// The path of a `file:` URI, normalised; `None` for other schemes.
fn doc_path(uri: &Url) -> Option<PathBuf> {
    if uri.scheme() != "file" {
        return None;
    }
    uri.to_file_path().ok().map(|p| normalise(&p))
}

/// Applies one change to a document's text: the whole text, or a range replaced (which a
/// client should not send to a full-sync server, but may).
fn apply(text: &mut String, c: lsp::TextDocumentContentChangeEvent) {
    match c.range {
        None => *text = c.text,
        Some(r) => {
            let file = prism_span::SourceFile::new("", text.as_str());
            let (a, b) = (crate::pos::offset(&file, r.start) as usize, crate::pos::offset(&file, r.end) as usize);
            let (a, b) = (a.min(b), a.max(b));
            text.replace_range(a..b, &c.text);
        }
    }
}

fn params<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, Failure> {
    serde_json::from_value(v).map_err(|e| (ErrorCode::InvalidParams, format!("invalid parameters: {e}")))
}

fn json<T: serde::Serialize>(v: T) -> Result<Value, Failure> {
    serde_json::to_value(v).map_err(|e| (ErrorCode::InternalError, e.to_string()))
}

fn send(connection: &Connection, msg: Message) -> Result<(), String> {
    connection.sender.send(msg).map_err(|e| format!("the client went away: {e}"))
}

fn publish(connection: &Connection, params: lsp::PublishDiagnosticsParams) -> Result<(), String> {
    let n = Notification::new(lsp::notification::PublishDiagnostics::METHOD.to_string(), params);
    send(connection, Message::Notification(n))
}
