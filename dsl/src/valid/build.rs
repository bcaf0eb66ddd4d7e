//! Lowering `image: build(package: "…", bin: "…", base: "…")` and `image: build(self)`: the image becomes
//! the placeholder `build:PACKAGE` and the build is recorded in the app's `builds`.

use super::Lower;
use crate::ast::{Call, Value};
use piceli_core::Code;
use piceli_core::model::ImageBuild;
use piceli_core::spanned::Spanned;

const EXAMPLE: &str = "build(package: \"shop-api\", bin: \"shop-api\", base: \"IMAGE@sha256:…\")";

/// Lowers a `build(…)` call written as `owner`'s image; returns the placeholder image. `self` is allowed
/// only for the operator (`in_operator`). A call with errors (reported) still gives a placeholder, recorded
/// as a build, so that no follow-on error about the image appears.
pub(super) fn build(
    lw: &mut Lower,
    call: &Call,
    owner: &str,
    in_operator: bool,
) -> Spanned<String> {
    let desc = format!("{owner} › image");
    if let Some(image) = lower(lw, call, owner, in_operator, &desc) {
        return image;
    }
    let image = Spanned::new(ImageBuild::placeholder("?"), lw.loc(call.sp, desc));
    lw.app.builds.push(ImageBuild {
        image: image.clone(),
        package: Spanned::bare("invalid".to_string()),
        ..ImageBuild::default()
    });
    image
}

fn lower(
    lw: &mut Lower,
    call: &Call,
    owner: &str,
    in_operator: bool,
    desc: &str,
) -> Option<Spanned<String>> {
    let desc = desc.to_string();
    let mut b = ImageBuild::default();
    let mut ok = true;
    match call.args.as_slice() {
        [] => {}
        [Value::Path(p)] if p.len() == 1 && p[0].text == "self" => {
            if !in_operator {
                lw.fail(
                    Code::BuildArguments,
                    p[0].sp,
                    format!(
                        "`build(self)` in {owner}: only the operator runs this app's own binary"
                    ),
                    "build a package of the workspace instead: `build(package: \"NAME\")`",
                );
                return None;
            }
            b.this_app = true;
        }
        [first, ..] => {
            lw.fail(
                Code::BuildArguments,
                first.sp(),
                "`build(…)` takes named arguments (or `self` in an operator)",
                format!("write `{EXAMPLE}`"),
            );
            ok = false;
        }
    }
    for (key, value) in &call.named {
        let field = match key.text.as_str() {
            "package" if !b.this_app => &mut b.package,
            "bin" if !b.this_app => b.bin.insert(Spanned::default()),
            "base" => b.base.insert(Spanned::default()),
            other => {
                let help = if b.this_app {
                    "`build(self)` takes only `base:`".to_string()
                } else {
                    format!("`build` takes `package:`, `bin:` and `base:`: `{EXAMPLE}`")
                };
                lw.fail(
                    Code::BuildArguments,
                    key.sp,
                    format!("`build` has no argument `{other}`"),
                    help,
                );
                ok = false;
                continue;
            }
        };
        match lw.str(value, format!("{desc} › {}", key.text)) {
            Some(s) => *field = s,
            None => ok = false,
        }
    }
    if b.this_app {
        // The app's own package and binary: the crate this `app!` is compiled in.
        let package = std::env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "self".to_string());
        let bin = std::env::var("CARGO_BIN_NAME").unwrap_or_else(|_| package.clone());
        b.package = Spanned::new(package, lw.loc(call.sp, desc.clone()));
        if bin != b.package.v {
            b.bin = Some(Spanned::new(bin, lw.loc(call.sp, desc.clone())));
        }
    } else if b.package.v.is_empty() && ok {
        lw.fail(
            Code::BuildArguments,
            call.sp,
            "`build(…)` names no package",
            format!("name the workspace package whose binary the image runs: `{EXAMPLE}`"),
        );
        return None;
    }
    if !ok {
        return None;
    }
    let mut placeholder = ImageBuild::placeholder(&b.package.v);
    if let Some(bin) = b.bin.as_ref().filter(|bin| bin.v != b.package.v) {
        placeholder = format!("{placeholder}/{}", bin.v);
    }
    let image = Spanned::new(placeholder, lw.loc(call.sp, desc));
    b.image = image.clone();
    let same = |o: &ImageBuild| {
        o.image.v == b.image.v && o.base.as_ref().map(|s| &s.v) == b.base.as_ref().map(|s| &s.v)
    };
    if !lw.app.builds.iter().any(same) {
        lw.app.builds.push(b);
    }
    Some(image)
}
