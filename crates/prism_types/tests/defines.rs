//! `-D NAME=VALUE` as `prism_types::Define::parse` reads it: what the command line, the
//! Python package and the corpus's `# define:` lines all go through.

use prism_types::Define;
use prism_types::tir::ConstValue;

#[test]
fn literals_of_every_kind_parse() {
    for (text, name, value) in [
        ("TILE=128", "TILE", ConstValue::Int(128)),
        ("TILE=+64", "TILE", ConstValue::Int(64)),
        ("OFF=-0x10", "OFF", ConstValue::Int(-16)),
        ("BIG=170141183460469231731687303715884105727", "BIG", ConstValue::Int(i128::MAX)),
        ("S=0.5", "S", ConstValue::Float(0.5)),
        ("S=1.", "S", ConstValue::Float(1.0)),
        ("S=-2.5e-3", "S", ConstValue::Float(-2.5e-3)),
        ("FAST=True", "FAST", ConstValue::Bool(true)),
        (" _x9 = False ", "_x9", ConstValue::Bool(false)),
    ] {
        assert_eq!(Define::parse(text), Ok(Define { name: name.into(), value }), "{text}");
    }
}

#[test]
fn anything_else_is_refused_with_the_text_in_the_message() {
    for text in [
        "TILE",
        "=3",
        "9X=3",
        "TI-LE=3",
        "TILE=",
        "TILE=abc",
        "TILE=true",
        "TILE=1e999",
        "TILE=nan",
        "TILE=inf",
        "TILE=0x",
        "TILE=1_000",
        "TILE=--3",
    ] {
        let e = Define::parse(text).expect_err(text);
        assert!(e.contains(text.trim()), "{text}: {e}");
    }
}
