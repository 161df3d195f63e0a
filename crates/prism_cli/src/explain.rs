//! `prism explain CODE`

use prism_diag::codes;

pub fn run(code: Option<&str>, list: bool) -> u8 {
    if list || code.is_none() {
        let mut text = String::new();
        for c in codes::CODES {
            text.push_str(&format!("{:<26} {}\n", c.code, c.summary));
        }
        crate::out(&text);
        return if list { 0 } else { 2 };
    }
    let code = code.expect("checked above");
    match codes::lookup(code) {
        Some(info) => {
            crate::out(&format!("{}\n", info.explanation.trim_end()));
            0
        }
        None => {
            errln!("error: no diagnostic code `{code}`; `prism explain --list` shows them all");
            2
        }
    }
}
