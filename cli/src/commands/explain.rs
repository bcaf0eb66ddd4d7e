//! `explain CODE`: what a fixed error code means and how to fix it.

use crate::prelude::*;
use clap::Args;
use piceli_core::{Code, codes};

/// The arguments of `explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The code, e.g. PCL0016 (omit to list every code).
    pub code: Option<String>,
}

impl Command for ExplainArgs {
    const EFFECTS: Effects = Effects {
        touches_cluster: "none",
        requires_approval: false,
    };

    fn run(&self, invocation: Invocation) -> Result<(), Failure> {
        run(invocation.global.output, self)
    }
}

/// Run `explain`.
pub fn run(output: Output, args: &ExplainArgs) -> Result<(), Failure> {
    let entries: Vec<codes::CodeInfo> = match &args.code {
        None => codes::ALL.to_vec(),
        Some(c) => vec![codes::lookup(c).ok_or_else(|| {
            Failure::new(
                Code::UnknownKey,
                format!("`{c}` is not a Piceli error code"),
                "run `explain` without a code to list them all".into(),
            )
        })?],
    };
    if output == Output::Json {
        let list: Vec<_> = entries
            .iter()
            .map(|i| serde_json::json!({ "code": i.code, "title": i.title, "explanation": i.explanation }))
            .collect();
        println!("{}", serde_json::Value::Array(list));
    } else if args.code.is_none() {
        for i in &entries {
            println!("{}  {}", i.code, i.title);
        }
    } else {
        for i in &entries {
            println!("{}: {}\n\n{}", i.code, i.title, i.explanation);
        }
    }
    Ok(())
}
