//! Reading maps and values: typed accessors that record locations and report shape problems.

use super::{DynamicKind, Lower};
use crate::ast::{Call, NameTok, Value};
use piceli_core::Code;
use piceli_core::model::{Labels, PortRef};
use piceli_core::rules::did_you_mean;
use piceli_core::spanned::Spanned;

/// The help of an unknown key: the closest of `allowed`, else `what` (e.g. `deployment web accepts`)
/// followed by every key allowed.
pub(crate) fn unknown_key_help(key: &str, allowed: &[&str], what: &str) -> String {
    match did_you_mean(key, allowed.iter().copied()) {
        Some(s) => format!("did you mean `{s}`?"),
        None => {
            let keys: Vec<String> = allowed.iter().map(|a| format!("`{a}`")).collect();
            format!("{what}: {}", keys.join(", "))
        }
    }
}

/// The entries of a map, taken one key at a time; what is left over is an unknown key.
pub struct Fields<'a> {
    entries: Vec<(&'a NameTok, &'a Value, bool)>,
    /// The description of the owner, e.g. `deployment web`.
    pub owner: String,
}

impl<'a> Fields<'a> {
    /// The fields of a map value (an error if it is not a map).
    pub fn of(lw: &mut Lower, value: Option<&'a Value>, owner: impl Into<String>) -> Fields<'a> {
        let owner = owner.into();
        let mut entries = Vec::new();
        match value {
            Some(Value::Map(m)) => {
                for (k, v) in &m.entries {
                    if let Some((first, _, _)) = entries
                        .iter()
                        .find(|(seen, _, _): &&(&NameTok, &Value, bool)| seen.text == k.text)
                    {
                        lw.fail(
                            Code::DuplicateKey,
                            k.sp,
                            format!("`{}` is given twice in {owner}", k.text),
                            super::keep_one(first.sp),
                        );
                        continue;
                    }
                    entries.push((k, v, false));
                }
            }
            Some(other) => lw.wrong_type(other, "a map `{ key: value, … }`", "{ image: \"…\" }"),
            None => {}
        }
        Fields { entries, owner }
    }

    /// The value of `key`, if given.
    pub fn take(&mut self, key: &str) -> Option<&'a Value> {
        let entry = self.entries.iter_mut().find(|(k, _, _)| k.text == key)?;
        entry.2 = true;
        Some(entry.1)
    }

    /// The key token of `key`, if given.
    pub fn key(&self, key: &str) -> Option<&'a NameTok> {
        self.entries
            .iter()
            .find(|(k, _, _)| k.text == key)
            .map(|(k, _, _)| *k)
    }

    /// Every entry (for maps whose keys are data, like env or config).
    pub fn all(&mut self) -> Vec<(&'a NameTok, &'a Value)> {
        self.entries
            .iter_mut()
            .map(|e| {
                e.2 = true;
                (e.0, e.1)
            })
            .collect()
    }

    /// Every entry not taken yet (then taken).
    pub fn rest(&mut self) -> Vec<(&'a NameTok, &'a Value)> {
        self.entries
            .iter_mut()
            .filter(|e| !e.2)
            .map(|e| {
                e.2 = true;
                (e.0, e.1)
            })
            .collect()
    }

    /// Whether a key not taken yet, and not a `known` key, is a misspelling of `key`: the unknown-key
    /// error will offer `key`, so a "missing `key`" error would only repeat it.
    pub fn misspells(&self, key: &str, known: impl Fn(&str) -> bool) -> bool {
        self.entries.iter().any(|(k, _, used)| {
            !used && k.text != key && !known(&k.text) && did_you_mean(&k.text, [key]).is_some()
        })
    }

    /// Report every key not taken, with the closest key of an item's table (every workload kind).
    pub fn finish_keys<C>(self, lw: &mut Lower, table: &[super::keys::Key<C>]) {
        let allowed = super::keys::names(table, super::keys::Kinds::ALL);
        self.finish(lw, &allowed);
    }

    /// Report every key not taken, with the closest allowed key.
    pub fn finish(self, lw: &mut Lower, allowed: &[&str]) {
        for (k, _, used) in self.entries {
            if used {
                continue;
            }
            let help = unknown_key_help(&k.text, allowed, &format!("{} accepts", self.owner));
            lw.fail(
                Code::UnknownKey,
                k.sp,
                format!("unknown key `{}` in {}", k.text, self.owner),
                help,
            );
        }
    }
}

impl Lower {
    /// A string: a literal, or a Rust expression evaluated at run time.
    pub fn str(&mut self, v: &Value, desc: impl Into<String>) -> Option<Spanned<String>> {
        match v {
            Value::Str(s) => Some(Spanned::new(s.value(), self.loc(v.sp(), desc))),
            Value::Expr(e, sp) => {
                let at = self.loc(*sp, desc);
                self.dynamic(at, DynamicKind::Str(e.clone()));
                Some(Spanned::new(String::new(), at))
            }
            _ => {
                self.wrong_type(v, "a string", "\"text\"");
                None
            }
        }
    }

    /// A string, where a number or name is also accepted as its text (env values, quantities like `1`).
    pub fn text(&mut self, v: &Value, desc: impl Into<String>) -> Option<Spanned<String>> {
        match v {
            Value::Int(n, sp) => Some(Spanned::new(n.to_string(), self.loc(*sp, desc))),
            Value::Bool(b, sp) => Some(Spanned::new(b.to_string(), self.loc(*sp, desc))),
            _ => self.str(v, desc),
        }
    }

    /// An integer: a literal, or a Rust expression evaluated at run time.
    pub fn int(&mut self, v: &Value, desc: impl Into<String>) -> Option<Spanned<i64>> {
        match v {
            Value::Int(n, sp) => Some(Spanned::new(*n, self.loc(*sp, desc))),
            Value::Expr(e, sp) => {
                let at = self.loc(*sp, desc);
                self.dynamic(at, DynamicKind::Int(e.clone()));
                Some(Spanned::new(0, at))
            }
            _ => {
                self.wrong_type(v, "a number", "3");
                None
            }
        }
    }

    /// A decimal number.
    pub fn float(&mut self, v: &Value, desc: impl Into<String>) -> Option<Spanned<f64>> {
        match v {
            Value::Float(f, sp) => Some(Spanned::new(*f, self.loc(*sp, desc))),
            Value::Int(n, sp) => Some(Spanned::new(*n as f64, self.loc(*sp, desc))),
            _ => {
                self.wrong_type(v, "a number", "0.5");
                None
            }
        }
    }

    /// `true` or `false`.
    pub fn bool(&mut self, v: &Value) -> Option<bool> {
        match v {
            Value::Bool(b, _) => Some(*b),
            _ => {
                self.wrong_type(v, "`true` or `false`", "true");
                None
            }
        }
    }

    /// A reference to something declared: `web` or `"web"`.
    pub fn name(&mut self, v: &Value, desc: impl Into<String>) -> Option<Spanned<String>> {
        match v {
            Value::Path(parts) if parts.len() == 1 => {
                Some(Spanned::new(parts[0].text.clone(), self.loc(v.sp(), desc)))
            }
            Value::Str(s) => Some(Spanned::new(s.value(), self.loc(v.sp(), desc))),
            _ => {
                self.wrong_type(v, "a name", "web");
                None
            }
        }
    }

    /// `NAME.KEY` (a ConfigMap or Secret key); a key may hold dots itself (`secret(api-tls.tls.crt)`: the
    /// key `tls.crt`, as a TLS generator fills it).
    pub fn dotted(
        &mut self,
        v: &Value,
        desc: &str,
        example: &str,
    ) -> Option<(Spanned<String>, Spanned<String>)> {
        match v {
            Value::Path(parts) if parts.len() >= 2 => {
                let a = Spanned::new(
                    parts[0].text.clone(),
                    self.loc(parts[0].sp, format!("{desc} › name")),
                );
                let key: Vec<&str> = parts[1..].iter().map(|p| p.text.as_str()).collect();
                let sp = parts[1].sp.to(parts[parts.len() - 1].sp);
                let b = Spanned::new(key.join("."), self.loc(sp, format!("{desc} › key")));
                Some((a, b))
            }
            _ => {
                self.wrong_type(v, "`NAME.KEY`", example);
                None
            }
        }
    }

    /// A list of strings (a single string is a list of one).
    pub fn str_list(&mut self, v: &Value, desc: &str) -> Vec<Spanned<String>> {
        match v {
            Value::List(items, _) => items.iter().filter_map(|i| self.str(i, desc)).collect(),
            Value::Str(_) | Value::Expr(..) => self.str(v, desc).into_iter().collect(),
            _ => {
                self.wrong_type(v, "a list of strings", "[\"a\", \"b\"]");
                Vec::new()
            }
        }
    }

    /// A list of names (a single name is a list of one).
    pub fn name_list(&mut self, v: &Value, desc: &str) -> Vec<Spanned<String>> {
        match v {
            Value::List(items, _) => items.iter().filter_map(|i| self.name(i, desc)).collect(),
            _ => self.name(v, desc).into_iter().collect(),
        }
    }

    /// `{ key: "value", … }` labels or annotations.
    pub fn labels(&mut self, v: &Value, desc: &str) -> Labels {
        let mut out = Vec::new();
        let mut fields = Fields::of(self, Some(v), desc);
        for (k, val) in fields.all() {
            let key = Spanned::new(
                k.text.clone(),
                self.loc(k.sp, format!("{desc} › {}", k.text)),
            );
            if let Some(value) = self.text(val, format!("{desc} › {}", k.text)) {
                out.push((key, value));
            }
        }
        out
    }

    /// A container port: its name (`http`) or number (`8080`).
    pub fn port_ref(&mut self, v: &Value, desc: &str) -> Option<PortRef> {
        match v {
            Value::Int(..) | Value::Expr(..) => self.int(v, desc).map(PortRef::Number),
            Value::Path(_) | Value::Str(_) => self.name(v, desc).map(PortRef::Name),
            _ => {
                self.wrong_type(v, "a port name or number", "http");
                None
            }
        }
    }

    /// The call a value is, or an error naming the calls allowed here.
    pub fn call<'v>(&mut self, v: &'v Value, allowed: &[&str], example: &str) -> Option<&'v Call> {
        match v {
            Value::Call(c) if allowed.contains(&c.name.text.as_str()) => Some(c),
            Value::Call(c) => {
                let help = match did_you_mean(&c.name.text, allowed.iter().copied()) {
                    Some(s) => format!("did you mean `{s}(…)`?"),
                    None => format!(
                        "use one of: {}",
                        allowed
                            .iter()
                            .map(|a| format!("`{a}(…)`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                self.fail(
                    Code::UnknownKey,
                    c.name.sp,
                    format!("unknown function `{}`", c.name.text),
                    help,
                );
                None
            }
            _ => {
                self.wrong_type(v, &format!("a call like `{example}`"), example);
                None
            }
        }
    }

    /// Named arguments of a call as fields.
    pub fn named<'c>(&mut self, c: &'c Call, owner: &str) -> Fields<'c> {
        let mut f = Fields::of(self, None, owner);
        for (k, v) in &c.named {
            f.push(k, v);
        }
        f
    }

    /// Positional argument `i` of a call, or an error saying it is missing.
    pub fn arg<'c>(
        &mut self,
        c: &'c Call,
        i: usize,
        what: &str,
        example: &str,
    ) -> Option<&'c Value> {
        let found = c.args.get(i);
        if found.is_none() {
            self.fail(
                Code::MissingKey,
                c.sp,
                format!("`{}(…)` needs {what}", c.name.text),
                format!("write `{example}`"),
            );
        }
        found
    }

    /// Report extra positional arguments.
    pub fn max_args(&mut self, c: &Call, n: usize, example: &str) {
        if let Some(extra) = c.args.get(n) {
            self.fail(
                Code::WrongType,
                extra.sp(),
                format!("`{}(…)` takes {n} positional argument(s)", c.name.text),
                format!("write `{example}`"),
            );
        }
    }
}

impl<'a> Fields<'a> {
    fn push(&mut self, k: &'a NameTok, v: &'a Value) {
        self.entries.push((k, v, false));
    }
}
