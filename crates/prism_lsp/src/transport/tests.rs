//! The frame reader over byte slices: what each frame of an input becomes (a message for
//! the server or an error response) and why reading stops.

use super::*;
use expect_test::{Expect, expect};

/// Runs [`pump`] over `input` with the cap `max`, one line per frame and one for the end.
fn check_with(max: usize, input: &[u8], expect: Expect) {
    let (tx, rx) = crossbeam_channel::unbounded();
    let rejected = std::cell::RefCell::new(Vec::new());
    let end = pump(&mut &input[..], max, &tx, |r| {
        rejected.borrow_mut().push(r.response().to_string());
        Ok(())
    });
    drop(tx);
    let mut out = String::new();
    for m in rx {
        out += &format!("message {}\n", serde_json::to_string(&m).unwrap());
    }
    for r in rejected.into_inner() {
        out += &format!("rejected {r}\n");
    }
    out += &match end {
        Ok(()) => "end\n".to_string(),
        Err(e) => format!("error: {e}\n"),
    };
    expect.assert_eq(&out);
}

fn check(input: &[u8], expect: Expect) {
    check_with(MAX_MESSAGE, input, expect);
}

/// `body` framed as a client frames it.
fn frame(body: &str) -> String {
    format!("Content-Length: {}\r\n\r\n{body}", body.len())
}

const HOVER: &str = r#"{"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{}}"#;

#[test]
fn empty_input_ends_cleanly() {
    check(
        b"",
        expect![[r#"
        end
    "#]],
    );
}

#[test]
fn a_request_and_a_notification() {
    let input = frame(HOVER) + &frame(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#);
    check(
        input.as_bytes(),
        expect![[r#"
        message {"id":7,"method":"textDocument/hover","params":{}}
        message {"method":"initialized","params":{}}
        end
    "#]],
    );
}

#[test]
fn header_names_in_any_case_and_other_headers_skipped() {
    let input = format!(
        "content-length:{}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{HOVER}",
        HOVER.len()
    );
    check(
        input.as_bytes(),
        expect![[r#"
        message {"id":7,"method":"textDocument/hover","params":{}}
        end
    "#]],
    );
}

#[test]
fn reading_stops_after_exit() {
    let input = frame(r#"{"jsonrpc":"2.0","method":"exit"}"#) + "garbage";
    check(
        input.as_bytes(),
        expect![[r#"
        message {"method":"exit"}
        end
    "#]],
    );
}

#[test]
fn a_body_that_is_not_json_is_answered_and_the_next_is_read() {
    let input = frame("{not json") + &frame("") + &frame("\u{fffd}") + &frame(HOVER);
    check(
        input.as_bytes(),
        expect![[r#"
        message {"id":7,"method":"textDocument/hover","params":{}}
        rejected {"error":{"code":-32700,"message":"the message is not JSON: key must be a string at line 1 column 2"},"id":null,"jsonrpc":"2.0"}
        rejected {"error":{"code":-32700,"message":"the message is not JSON: EOF while parsing a value at line 1 column 0"},"id":null,"jsonrpc":"2.0"}
        rejected {"error":{"code":-32700,"message":"the message is not JSON: expected value at line 1 column 1"},"id":null,"jsonrpc":"2.0"}
        end
    "#]],
    );
}

#[test]
fn a_body_that_is_not_utf8_is_not_json() {
    let mut input = b"Content-Length: 3\r\n\r\n\"\xff\"".to_vec();
    input.extend(frame(HOVER).as_bytes());
    check(
        &input,
        expect![[r#"
        message {"id":7,"method":"textDocument/hover","params":{}}
        rejected {"error":{"code":-32700,"message":"the message is not JSON: invalid unicode code point at line 1 column 2"},"id":null,"jsonrpc":"2.0"}
        end
    "#]],
    );
}

#[test]
fn json_that_is_not_a_message_is_an_invalid_request() {
    let bodies = [
        "[1,2]",
        "42",
        "{}",
        r#"{"jsonrpc":"2.0","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"textDocument/hover"}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"textDocument/hover"}"#,
        r#"{"jsonrpc":"2.0","id":4294967296,"method":"textDocument/hover"}"#,
        r#"{"jsonrpc":"2.0","id":[],"method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":7}"#,
        r#"{"jsonrpc":"2.0","id":"a","method":["x"]}"#,
    ];
    let input: String = bodies.iter().map(|b| frame(b)).collect::<String>() + &frame(HOVER);
    check(
        input.as_bytes(),
        expect![[r#"
        message {"id":7,"method":"textDocument/hover","params":{}}
        rejected {"error":{"code":-32600,"message":"not a JSON-RPC request, response or notification: not an object"},"id":null,"jsonrpc":"2.0"}
        rejected {"error":{"code":-32600,"message":"not a JSON-RPC request, response or notification: not an object"},"id":null,"jsonrpc":"2.0"}
        rejected {"error":{"code":-32600,"message":"not a JSON-RPC request, response or notification: it has neither a method nor an id"},"id":null,"jsonrpc":"2.0"}
        rejected {"error":{"code":-32600,"message":"not a JSON-RPC request, response or notification: it has neither a method nor an id"},"id":null,"jsonrpc":"2.0"}
        rejected {"error":{"code":-32600,"message":"not a JSON-RPC request, response or notification: the id is not a 32-bit integer or a string"},"id":null,"jsonrpc":"2.0"}
        rejected {"error":{"code":-32600,"message":"not a JSON-RPC request, response or notification: the id is not a 32-bit integer or a string"},"id":null,"jsonrpc":"2.0"}
        rejected {"error":{"code":-32600,"message":"not a JSON-RPC request, response or notification: the id is not a 32-bit integer or a string"},"id":null,"jsonrpc":"2.0"}
        rejected {"error":{"code":-32600,"message":"not a JSON-RPC request, response or notification: the id is not a 32-bit integer or a string"},"id":null,"jsonrpc":"2.0"}
        rejected {"error":{"code":-32600,"message":"not a JSON-RPC request, response or notification: the method is not a string"},"id":3,"jsonrpc":"2.0"}
        rejected {"error":{"code":-32600,"message":"not a JSON-RPC request, response or notification: the method is not a string"},"id":"a","jsonrpc":"2.0"}
        end
    "#]],
    );
}

#[test]
fn a_response_from_the_client_is_a_message() {
    let input = frame(r#"{"jsonrpc":"2.0","id":"prism-refresh-1","result":null}"#);
    check(
        input.as_bytes(),
        expect![[r#"
        message {"id":"prism-refresh-1"}
        end
    "#]],
    );
}

#[test]
fn a_body_at_the_cap_is_read_and_one_over_it_ends_reading() {
    check_with(
        2,
        frame("{}").as_bytes(),
        expect![[r#"
        rejected {"error":{"code":-32600,"message":"not a JSON-RPC request, response or notification: it has neither a method nor an id"},"id":null,"jsonrpc":"2.0"}
        end
    "#]],
    );
    check_with(
        2,
        frame("[1]").as_bytes(),
        expect![[r#"
        error: a message of 3 bytes is over the limit of 2 bytes
    "#]],
    );
}

#[test]
fn a_huge_length_is_refused_before_anything_is_allocated() {
    check(
        b"Content-Length: 1000000000000\r\n\r\n{}",
        expect![[r#"
        error: a message of 1000000000000 bytes is over the limit of 67108864 bytes (64 MiB)
    "#]],
    );
    check(
        b"Content-Length: 99999999999999999999999999\r\n\r\n{}",
        expect![[r#"
        error: a message of 99999999999999999999999999 bytes is over the limit of 67108864 bytes (64 MiB)
    "#]],
    );
}

#[test]
fn a_missing_or_bad_length_ends_reading() {
    check(
        b"Content-Type: x\r\n\r\n{}",
        expect![[r#"
        error: a message has no Content-Length header
    "#]],
    );
    check(
        b"\r\n",
        expect![[r#"
        error: a message has no Content-Length header
    "#]],
    );
    check(
        b"Content-Length: abc\r\n\r\n{}",
        expect![[r#"
        error: the Content-Length `abc` is not a number
    "#]],
    );
    check(
        b"Content-Length: -1\r\n\r\n{}",
        expect![[r#"
        error: the Content-Length `-1` is not a number
    "#]],
    );
    check(
        b"Content-Length: \r\n\r\n{}",
        expect![[r#"
        error: the Content-Length `` is not a number
    "#]],
    );
    check(
        b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
        expect![[r#"
        error: a message has two Content-Length headers
    "#]],
    );
}

#[test]
fn a_malformed_header_line_ends_reading() {
    check(
        b"Content-Length: 2\n\n{}",
        expect![[r#"
        error: the header line `Content-Length: 2` does not end with \r\n
    "#]],
    );
    check(
        b"hello\x1b[2J\r\n\r\n{}",
        expect![[r#"
        error: the header line `hello\u{1b}[2J` is not `Name: value`
    "#]],
    );
    check(
        b"\xff: 2\r\n\r\n{}",
        expect![[r#"
        error: the header line `�: 2` is not `Name: value`
    "#]],
    );
    let long = format!("X-Pad: {}\r\n", "a".repeat(MAX_HEADER));
    check(
        long.as_bytes(),
        expect![[r#"
        error: a message's header is longer than 8192 bytes
    "#]],
    );
}

#[test]
fn the_input_ending_inside_a_frame_ends_reading() {
    let input = frame(HOVER) + "Content-Length: 100\r\n\r\n{\"jsonrpc\"";
    check(
        input.as_bytes(),
        expect![[r#"
        message {"id":7,"method":"textDocument/hover","params":{}}
        error: the input ended after 10 bytes of a message of 100 bytes
    "#]],
    );
    check(
        b"Content-Length: 2\r\n",
        expect![[r#"
        error: the input ended inside a message's header
    "#]],
    );
    check(
        b"Content-Len",
        expect![[r#"
        error: the input ended inside a message's header
    "#]],
    );
}

#[test]
fn a_long_header_line_is_cut_in_the_message() {
    let input = format!("{}\r\n\r\n", "x".repeat(1000));
    check(
        input.as_bytes(),
        expect![[r#"
        error: the header line `xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...` is not `Name: value`
    "#]],
    );
}
