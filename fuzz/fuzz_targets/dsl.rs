//! The `app!` front end: any text that tokenizes goes through `piceli_dsl::app` (fragments, parse,
//! check, expand) and `piceli_dsl::fragment`, as the proc-macro hands them its tokens. No panic allowed.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // What rustc would refuse before the macro runs is not the macro's input.
    let Ok(tokens) = text.parse::<proc_macro2::TokenStream>() else {
        return;
    };
    let _ = piceli_dsl::app(tokens.clone());
    let _ = piceli_dsl::fragment(tokens);
});
