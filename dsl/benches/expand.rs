//! How long the `app!` macro itself takes (parse, check, expand) on a generated app, and how much code it
//! hands to rustc — the part of an app crate's build that is the DSL's, apart from rustc's own work on
//! the output. Not a criterion bench: a cold macro run is what a build pays, so each run is timed alone.
//!
//! `cargo bench -p piceli-dsl --bench expand -- FILE [RUNS]`, FILE holding one `piceli::app! { … }`
//! (e.g. render-1000's generated `app.rs` or `app_blocks.rs` under `target/*/build/render-1000-*/out/`).

use std::time::{Duration, Instant};

fn main() {
    // cargo bench passes `--bench`; the rest are ours.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(path) = args.first() else {
        eprintln!("usage: cargo bench -p piceli-dsl --bench expand -- FILE [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(10);
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("cannot read {path}: {e}");
            std::process::exit(2);
        }
    };
    let Some(body) = macro_body(&text) else {
        eprintln!("{path} holds no `piceli::app! {{ … }}`");
        std::process::exit(2);
    };
    let input: proc_macro2::TokenStream = match body.parse() {
        Ok(tokens) => tokens,
        Err(e) => {
            eprintln!("{path} does not lex: {e}");
            std::process::exit(2);
        }
    };
    let mut times: Vec<Duration> = Vec::with_capacity(runs);
    let mut output = String::new();
    for _ in 0..runs {
        let tokens = input.clone();
        let start = Instant::now();
        let out = piceli_dsl::app(tokens);
        times.push(start.elapsed());
        output = out.to_string();
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{path}: {runs} runs, min {:.1} ms, median {:.1} ms, max {:.1} ms; output {} bytes of tokens",
        ms(times[0]),
        ms(times[runs / 2]),
        ms(times[runs - 1]),
        output.len()
    );
    if output.contains("compile_error") {
        eprintln!("the app has errors: the figure is not the expansion's");
        std::process::exit(1);
    }
}

/// The tokens between the braces of the first `piceli::app! { … }`.
fn macro_body(text: &str) -> Option<&str> {
    let start = text.find("piceli::app!")?;
    let open = start + text[start..].find('{')?;
    let close = text.rfind('}')?;
    (close > open).then(|| &text[open + 1..close])
}
