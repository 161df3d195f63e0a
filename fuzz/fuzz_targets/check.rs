//! Feeds arbitrary bytes, decoded lossily as UTF-8, to the whole front end (lex, parse,
//! check) and renders the diagnostics, as `prism check` does. Any panic, hang or stack
//! overflow is a bug: the front end must report problems, never crash on them.

#![no_main]

use libfuzzer_sys::fuzz_target;
use prism_diag::{Color, Problems, render};
use prism_span::SourceMap;

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data).into_owned();
    let mut map = SourceMap::default();
    let id = map.add("fuzz.prism", src.as_str());
    let mut problems = Problems::default();
    prism_types::check_source(id, &src, &prism_types::Target::default(), &mut problems);
    problems.sort();
    let _ = render(&map, &problems.into_vec(), Color::Never);
});
