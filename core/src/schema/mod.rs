//! The Kubernetes 1.33 API schema of the types `app!` blocks set (`pod:`, `container:`, `spec:`, …).
//!
//! [`table`] is generated from `core/schema/k8s-1.33.json` (a distilled copy of the upstream schema, see
//! `core/schema/SOURCE.md`) by the test in `gen.rs`; it is plain static data: one [`TypeDef`] per type,
//! its fields sorted by name, so a lookup is a binary search and nothing is parsed at run time or in the
//! macro. [`check`] walks a block against a root type and reports every problem once.

pub mod check;
#[cfg(test)]
mod generate;
mod limits;
pub mod merge;
pub mod source;
#[rustfmt::skip]
mod table;

pub use table::*;

use crate::model::WorkloadKind;

/// The API type of a workload's `spec:` block.
pub fn workload_spec(kind: WorkloadKind) -> TypeId {
    match kind {
        WorkloadKind::Deployment => DEPLOYMENT_SPEC,
        WorkloadKind::StatefulSet => STATEFUL_SET_SPEC,
        WorkloadKind::DaemonSet => DAEMON_SET_SPEC,
        WorkloadKind::Job => JOB_SPEC,
        WorkloadKind::CronJob => CRON_JOB_SPEC,
    }
}

/// An index into [`TYPES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TypeId(pub u16);

/// An object type of the API: its name (`io.k8s.api.core.v1.PodSpec`) and its fields, sorted by name.
#[derive(Debug)]
pub struct TypeDef {
    /// The schema's name of the type.
    pub name: &'static str,
    /// Its fields, sorted by name.
    pub fields: &'static [Field],
}

/// One field of an object type.
#[derive(Debug)]
pub struct Field {
    /// The API's (camelCase) name.
    pub name: &'static str,
    /// What values it takes.
    pub shape: Shape,
    /// The schema lists it as required.
    pub required: bool,
}

/// The values a field takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A string.
    String,
    /// An integer.
    Integer,
    /// A number (integer or decimal).
    Number,
    /// `true` or `false`.
    Boolean,
    /// A resource quantity (`100m`, `1Gi`).
    Quantity,
    /// An integer or a string (`8080` or `http`, `25%`).
    IntOrString,
    /// Anything (free-form JSON).
    Any,
    /// A string, one of these values.
    Enum(&'static [&'static str]),
    /// An object of a type.
    Object(TypeId),
    /// A list; for `Map` lists, items are identified by the merge keys.
    List(&'static Shape, ListKind),
    /// A map from strings to values.
    Map(&'static Shape),
}

/// How a list's items are identified when merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    /// The list is replaced whole.
    Atomic,
    /// Items are unique scalars.
    Set,
    /// Items are objects identified by these keys (the first is the strategic-merge key).
    Map(&'static [&'static str]),
}

impl TypeId {
    /// The type's definition.
    pub fn def(self) -> &'static TypeDef {
        &TYPES[self.0 as usize]
    }

    /// The field called `name`, if the type has one.
    pub fn field(self, name: &str) -> Option<&'static Field> {
        let fields = self.def().fields;
        fields
            .binary_search_by(|f| f.name.cmp(name))
            .ok()
            .map(|i| &fields[i])
    }

    /// The short name of the type (`PodSpec`).
    pub fn short_name(self) -> &'static str {
        let name = self.def().name;
        name.rsplit('.').next().unwrap_or(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_sorted_and_found() {
        for t in TYPES {
            assert!(
                t.fields.windows(2).all(|w| w[0].name < w[1].name),
                "{}",
                t.name
            );
        }
        let tol = POD_SPEC.field("tolerations").expect("tolerations");
        assert!(matches!(
            tol.shape,
            Shape::List(Shape::Object(_), ListKind::Atomic)
        ));
        assert!(POD_SPEC.field("tolerationz").is_none());
        let c = CONTAINER.field("name").expect("name");
        assert!(c.required);
        assert!(matches!(
            CONTAINER.field("imagePullPolicy").map(|f| f.shape),
            Some(Shape::Enum(["Always", "Never", "IfNotPresent"]))
        ));
        assert_eq!(POD_SPEC.short_name(), "PodSpec");
    }
}
