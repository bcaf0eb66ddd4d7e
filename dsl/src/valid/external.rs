//! Lowering `external KIND NAME;`: an object the app refers to and someone else makes.

use super::Lower;
use crate::ast::Item;
use piceli_core::Code;
use piceli_core::model::{External, ExternalKind};
use piceli_core::rules::did_you_mean;
use piceli_core::spanned::Spanned;

pub(super) fn external(lw: &mut Lower, item: &Item) {
    let words = ExternalKind::ALL.iter().map(|(w, _)| *w);
    let (kind_tok, name) = match (&item.qualifier, &item.name) {
        (Some(q), Some(n)) => (q, n),
        (None, Some(n)) if words.clone().any(|w| w == n.text) => {
            lw.fail(
                Code::MissingKey,
                n.sp,
                format!("`external {}` needs a name", n.text),
                format!("write `external {} NAME;`", n.text),
            );
            return;
        }
        (None, Some(n)) => {
            lw.fail(
                Code::ExternalKindUnknown,
                n.sp,
                format!(
                    "`external {}` does not say what kind of object it is",
                    n.text
                ),
                format!(
                    "write `external secret {};` (the kinds: {})",
                    n.text,
                    ExternalKind::words()
                ),
            );
            return;
        }
        _ => {
            lw.fail(
                Code::MissingKey,
                item.keyword.sp,
                "`external` needs a kind and a name",
                format!(
                    "write e.g. `external secret tls;` (the kinds: {})",
                    ExternalKind::words()
                ),
            );
            return;
        }
    };
    let Some(&(_, kind)) = ExternalKind::ALL.iter().find(|(w, _)| *w == kind_tok.text) else {
        let help = match did_you_mean(&kind_tok.text, words) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!(
                "only a {} can be external; declare a `{}` in the app or include it",
                ExternalKind::words(),
                kind_tok.text
            ),
        };
        lw.fail(
            Code::ExternalKindUnknown,
            kind_tok.sp,
            format!("`{}` cannot be external", kind_tok.text),
            help,
        );
        return;
    };
    let extra = [
        item.call.as_ref().map(|v| v.sp()),
        item.arrow.as_ref().map(|n| n.sp),
        item.eq.as_ref().map(|v| v.sp()),
        item.body.as_ref().map(|v| v.sp()),
    ];
    if let Some(sp) = extra.into_iter().flatten().next() {
        lw.fail(
            Code::ExternalWithBody,
            sp,
            format!("`external {} {}` has more than a kind and a name", kind_tok.text, name.text),
            format!(
                "someone else makes it, so the app says nothing about its contents: write `external {} {};`",
                kind_tok.text, name.text
            ),
        );
        return;
    }
    let at = lw.loc(name.sp, format!("external {} {}", kind_tok.text, name.text));
    lw.app.externals.push(External {
        kind,
        name: Spanned::new(name.text.clone(), at),
    });
}
