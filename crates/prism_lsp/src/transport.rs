//! The protocol on stdin and stdout: `Content-Length` framed JSON-RPC, read with a size cap
//! and answered when a body is bad, in place of `lsp_server::Connection::stdio`.
//!
//! `lsp-server`'s stdio reader stops at the first body that is not a message (the server
//! then ends) and allocates whatever length a header declares before reading it (a
//! `Content-Length` of 10^12 aborts the process). Here a frame is read by [`read_frame`],
//! which refuses a body over [`MAX_MESSAGE`] before allocating anything, and decoded by
//! [`decode`]; the two kinds of bad input are told apart:
//!
//! - a well-framed body that is not JSON, or JSON that is not a request, response or
//!   notification, is answered with a JSON-RPC error (`ParseError` or `InvalidRequest`,
//!   id `null` unless the body had a usable id), and the next frame is read: the framing
//!   says where it starts;
//! - broken framing (no `Content-Length`, a length that is not a number or is over the
//!   cap, a header line without `\r\n`, the input ending inside a frame) leaves no way to
//!   find the next message, so reading stops with a [`FrameError`], which `prism lsp`
//!   prints before exiting with a non-zero code.
//!
//! The server sees neither: it gets [`Message`]s on a [`Connection`] as from
//! `Connection::stdio`, and its messages are written as they come.

use lsp_server::{Connection, ErrorCode, Message};
use serde_json::{Value, json};
use std::fmt;
use std::io::{self, BufRead, Read, Write};
use std::thread::JoinHandle;

/// The largest message body read, in bytes (64 MiB): a document of several million lines.
/// A longer `Content-Length` ends the session before anything is allocated for it.
pub const MAX_MESSAGE: usize = 64 << 20;

/// The most bytes a frame's header (its lines up to the blank one) may take.
pub const MAX_HEADER: usize = 8 << 10;

/// Why the input cannot be read as frames any more.
#[derive(Debug)]
pub enum FrameError {
    /// A header line that does not end with `\r\n`.
    NoCrlf {
        /// The line, without its ending: lossily decoded, cut after 80 characters.
        line: String,
    },
    /// A header line that is not `Name: value`.
    BadHeader {
        /// The line, without its ending: lossily decoded, cut after 80 characters.
        line: String,
    },
    /// A header without a `Content-Length` line.
    NoLength,
    /// Two `Content-Length` lines.
    TwoLengths,
    /// A `Content-Length` that is not a decimal number.
    BadLength {
        /// The value as written.
        value: String,
    },
    /// A `Content-Length` over the cap.
    TooLarge {
        /// The value as written (it may not fit a `usize`).
        value: String,
        /// The cap.
        max: usize,
    },
    /// A header longer than [`MAX_HEADER`].
    HeaderTooLong,
    /// The input ended inside a frame's header.
    EndInHeader,
    /// The input ended inside a body.
    EndInBody {
        /// The declared length.
        len: usize,
        /// The bytes there were.
        got: usize,
    },
    /// Reading the input failed.
    Read(io::Error),
    /// Writing an error response to the client failed.
    Write(io::Error),
}

/// A body that is not a message, and the error response it gets.
#[derive(Debug, Clone)]
pub struct Rejection {
    /// `ParseError` for a body that is not JSON, `InvalidRequest` for JSON that is not a
    /// message.
    pub code: ErrorCode,
    /// What is wrong.
    pub message: String,
    /// The body's id, when it had one that the client can match (an integer or a
    /// string); `null` otherwise.
    pub id: Value,
}

/// The reading and writing threads of [`stdio`].
pub struct Transport {
    reader: JoinHandle<Result<(), FrameError>>,
    writer: JoinHandle<io::Result<()>>,
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::NoCrlf { line } => {
                write!(f, "the header line `{}` does not end with \\r\\n", line.escape_debug())
            }
            FrameError::BadHeader { line } => {
                write!(f, "the header line `{}` is not `Name: value`", line.escape_debug())
            }
            FrameError::NoLength => write!(f, "a message has no Content-Length header"),
            FrameError::TwoLengths => write!(f, "a message has two Content-Length headers"),
            FrameError::BadLength { value } => write!(f, "the Content-Length `{value}` is not a number"),
            FrameError::TooLarge { value, max } => {
                write!(f, "a message of {value} bytes is over the limit of {max} bytes")?;
                if max % (1 << 20) == 0 { write!(f, " ({} MiB)", max >> 20) } else { Ok(()) }
            }
            FrameError::HeaderTooLong => write!(f, "a message's header is longer than {MAX_HEADER} bytes"),
            FrameError::EndInHeader => write!(f, "the input ended inside a message's header"),
            FrameError::EndInBody { len, got } => {
                write!(f, "the input ended after {got} bytes of a message of {len} bytes")
            }
            FrameError::Read(e) => write!(f, "cannot read the client's messages: {e}"),
            FrameError::Write(e) => write!(f, "cannot write to the client: {e}"),
        }
    }
}

impl Transport {
    /// Waits for the server's messages to be written (drop the connection first) and, when
    /// `reading_ended` (the server saw `exit` or the input close; otherwise the reader may
    /// be waiting for input that never comes), for the reader: why the input stopped
    /// being read, before any error writing.
    pub fn join(self, reading_ended: bool) -> Result<(), String> {
        let written = match self.writer.join() {
            Ok(res) => res.map_err(|e| FrameError::Write(e).to_string()),
            Err(_) => Err("the writing thread panicked".into()),
        };
        if reading_ended {
            match self.reader.join() {
                Ok(res) => res.map_err(|e| e.to_string())?,
                Err(_) => return Err("the reading thread panicked".into()),
            }
        }
        written
    }
}

impl Rejection {
    /// The JSON-RPC error response.
    pub fn response(&self) -> Value {
        json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": { "code": self.code as i32, "message": self.message },
        })
    }
}

/// Starts the transport on stdin and stdout: a connection for [`crate::serve`], and the
/// threads behind it.
pub fn stdio() -> (Connection, Transport) {
    // One message read ahead: the server sees that another is waiting (and coalesces
    // analyses, `docs/editors.md`) without bodies piling up in memory.
    let (to_server, receiver) = crossbeam_channel::bounded::<Message>(1);
    let (sender, for_client) = crossbeam_channel::bounded::<Message>(0);
    let reader = std::thread::spawn(move || {
        let mut input = io::stdin().lock();
        pump(&mut input, MAX_MESSAGE, &to_server, |r| write_frame(&mut io::stdout().lock(), &r.response()))
    });
    let writer = std::thread::spawn(move || {
        for msg in for_client {
            msg.write(&mut io::stdout().lock())?;
        }
        Ok(())
    });
    (Connection { sender, receiver }, Transport { reader, writer })
}

/// Reads frames from `input` until it ends (or until `exit`, or until the server is gone),
/// sending each message to `server` and each rejected body to `reject`.
///
/// Invariant: every well-framed body is either sent or rejected, in order; reading stops
/// only at the end of the input, after `exit`, when the server is gone, or at a
/// [`FrameError`].
pub fn pump(
    input: &mut impl BufRead,
    max: usize,
    server: &crossbeam_channel::Sender<Message>,
    mut reject: impl FnMut(Rejection) -> io::Result<()>,
) -> Result<(), FrameError> {
    while let Some(body) = read_frame(input, max)? {
        match decode(&body) {
            Ok(msg) => {
                let exit = matches!(&msg, Message::Notification(n) if n.method == "exit");
                if server.send(msg).is_err() || exit {
                    return Ok(());
                }
            }
            Err(r) => reject(r).map_err(FrameError::Write)?,
        }
    }
    Ok(())
}

/// Reads one frame's body: `Ok(None)` at the end of the input before a frame starts.
///
/// A frame is header lines `Name: value` ending with `\r\n` (names in any case; only
/// `Content-Length` is read, others such as `Content-Type` are skipped), a blank line, and
/// `Content-Length` bytes. A length over `max` is refused before anything is allocated
/// for it, and the body buffer grows only as bytes arrive.
pub fn read_frame(input: &mut impl BufRead, max: usize) -> Result<Option<Vec<u8>>, FrameError> {
    let mut len: Option<usize> = None;
    let mut header = 0;
    let mut line = Vec::new();
    loop {
        line.clear();
        let budget = (MAX_HEADER - header) as u64;
        let n = input.by_ref().take(budget).read_until(b'\n', &mut line).map_err(FrameError::Read)?;
        header += n;
        if n == 0 && header == 0 {
            return Ok(None);
        }
        if !line.ends_with(b"\n") {
            return Err(if header >= MAX_HEADER { FrameError::HeaderTooLong } else { FrameError::EndInHeader });
        }
        let Some(text) = line.strip_suffix(b"\r\n") else {
            return Err(FrameError::NoCrlf { line: lossy(&line[..line.len() - 1]) });
        };
        if text.is_empty() {
            break;
        }
        let Some((name, value)) = std::str::from_utf8(text).ok().and_then(|t| t.split_once(':')) else {
            return Err(FrameError::BadHeader { line: lossy(text) });
        };
        if !name.trim().eq_ignore_ascii_case("Content-Length") {
            continue;
        }
        if len.is_some() {
            return Err(FrameError::TwoLengths);
        }
        let value = value.trim();
        if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
            return Err(FrameError::BadLength { value: value.into() });
        }
        match value.parse::<usize>() {
            Ok(n) if n <= max => len = Some(n),
            _ => return Err(FrameError::TooLarge { value: value.into(), max }),
        }
    }
    let len = len.ok_or(FrameError::NoLength)?;
    let mut body = Vec::with_capacity(len.min(64 << 10));
    let got = input.by_ref().take(len as u64).read_to_end(&mut body).map_err(FrameError::Read)?;
    if got < len {
        return Err(FrameError::EndInBody { len, got });
    }
    Ok(Some(body))
}

/// Decodes a body: a request, a response or a notification, or why it is none.
///
/// A request's id must be an integer that fits 32 bits or a string (LSP's `integer |
/// string`); a body with another id is refused rather than taken for a notification.
pub fn decode(body: &[u8]) -> Result<Message, Rejection> {
    let value: Value = serde_json::from_slice(body).map_err(|e| Rejection {
        code: ErrorCode::ParseError,
        message: format!("the message is not JSON: {e}"),
        id: Value::Null,
    })?;
    let invalid = |message: &str, id: &Value| Rejection {
        code: ErrorCode::InvalidRequest,
        message: format!("not a JSON-RPC request, response or notification: {message}"),
        id: id.clone(),
    };
    let Some(obj) = value.as_object() else { return Err(invalid("not an object", &Value::Null)) };
    let id = match obj.get("id") {
        None => Value::Null,
        Some(id @ Value::String(_)) => id.clone(),
        Some(id) if id.as_i64().is_some_and(|n| i32::try_from(n).is_ok()) => id.clone(),
        Some(_) => return Err(invalid("the id is not a 32-bit integer or a string", &Value::Null)),
    };
    match obj.get("method") {
        Some(Value::String(_)) => {}
        Some(_) => return Err(invalid("the method is not a string", &id)),
        None if id.is_null() => return Err(invalid("it has neither a method nor an id", &id)),
        None => {}
    }
    serde_json::from_value(value).map_err(|e| invalid(&e.to_string(), &id))
}

/// Writes `body` as one frame and flushes it.
fn write_frame(out: &mut impl Write, body: &Value) -> io::Result<()> {
    let text = body.to_string();
    write!(out, "Content-Length: {}\r\n\r\n{text}", text.len())?;
    out.flush()
}

/// A header line for a message: lossily decoded, and cut after 80 characters.
fn lossy(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(80) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.into_owned(),
    }
}

#[cfg(test)]
mod tests;
