//! The importer alone as a process (read → clean → lower → print, module to stdout), to benchmark it apart
//! from the `piceli` binary's start-up: `cargo run --release -p piceli-import --example import_files -- FILE…`.

use piceli_core::Coded as _;

fn main() -> std::process::ExitCode {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    match piceli_import::read::read_inputs(&paths, &mut std::io::stdin().lock()) {
        Ok(sources) => {
            let imported = piceli_import::import(sources, &piceli_import::Options::default());
            print!("{}", imported.source);
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error[{}]: {e}", e.code());
            std::process::ExitCode::from(2)
        }
    }
}
