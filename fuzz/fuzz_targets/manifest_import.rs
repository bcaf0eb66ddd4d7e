//! `piceli import` on one input: the YAML 1.1 / JSON reader (`parse_text`, multi-document YAML, JSON
//! objects and `List`s), then lowering and printing the app module. No panic allowed.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // `None`: JSON or YAML guessed from the first character, as for standard input.
    let Ok(sources) = piceli_import::read::parse_text(text, "fuzz.yaml", None) else {
        return;
    };
    let imported = piceli_import::import(sources, &piceli_import::Options::default());
    let _ = (imported.source.len(), imported.warnings.len());
});
