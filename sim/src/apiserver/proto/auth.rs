//! Protobuf field tables of the authentication, authorization and RBAC kinds kubectl sends as
//! protobuf: self reviews, TokenRequest (`create token`), Role, ClusterRole and their bindings.

use super::{F, K, META, SELECTOR};

const RESOURCE_ATTRIBUTES: &[F] = &[
    F(1, "namespace", K::Str, false),
    F(2, "verb", K::Str, false),
    F(3, "group", K::Str, false),
    F(4, "version", K::Str, false),
    F(5, "resource", K::Str, false),
    F(6, "subresource", K::Str, false),
    F(7, "name", K::Str, false),
];
const NON_RESOURCE_ATTRIBUTES: &[F] = &[F(1, "path", K::Str, false), F(2, "verb", K::Str, false)];
const SSAR_SPEC: &[F] = &[
    F(1, "resourceAttributes", K::Msg(RESOURCE_ATTRIBUTES), false),
    F(
        2,
        "nonResourceAttributes",
        K::Msg(NON_RESOURCE_ATTRIBUTES),
        false,
    ),
];
pub(super) const SSAR: &[F] = &[
    F(1, "metadata", K::Msg(META), false),
    F(2, "spec", K::Msg(SSAR_SPEC), false),
];
pub(super) const SSRR: &[F] = &[
    F(1, "metadata", K::Msg(META), false),
    F(
        2,
        "spec",
        K::Msg(&[F(1, "namespace", K::Str, false)]),
        false,
    ),
];
pub(super) const SSR: &[F] = &[F(1, "metadata", K::Msg(META), false)];
const BOUND_OBJECT_REF: &[F] = &[
    F(1, "kind", K::Str, false),
    F(2, "apiVersion", K::Str, false),
    F(3, "name", K::Str, false),
    F(4, "uid", K::Str, false),
];
pub(super) const TOKEN_REQUEST: &[F] = &[
    F(1, "metadata", K::Msg(META), false),
    F(
        2,
        "spec",
        K::Msg(&[
            F(1, "audiences", K::RepStr, false),
            F(3, "boundObjectRef", K::Msg(BOUND_OBJECT_REF), false),
            F(4, "expirationSeconds", K::Int, true),
        ]),
        false,
    ),
];
const POLICY_RULE: &[F] = &[
    F(1, "verbs", K::RepStr, false),
    F(2, "apiGroups", K::RepStr, false),
    F(3, "resources", K::RepStr, false),
    F(4, "resourceNames", K::RepStr, false),
    F(5, "nonResourceURLs", K::RepStr, false),
];
pub(super) const ROLE: &[F] = &[
    F(1, "metadata", K::Msg(META), false),
    F(2, "rules", K::RepMsg(POLICY_RULE), false),
];
pub(super) const CLUSTER_ROLE: &[F] = &[
    F(1, "metadata", K::Msg(META), false),
    F(2, "rules", K::RepMsg(POLICY_RULE), false),
    F(
        3,
        "aggregationRule",
        K::Msg(&[F(1, "clusterRoleSelectors", K::RepMsg(SELECTOR), false)]),
        false,
    ),
];
const SUBJECT: &[F] = &[
    F(1, "kind", K::Str, false),
    F(2, "apiGroup", K::Str, false),
    F(3, "name", K::Str, false),
    F(4, "namespace", K::Str, false),
];
const ROLE_REF: &[F] = &[
    F(1, "apiGroup", K::Str, false),
    F(2, "kind", K::Str, false),
    F(3, "name", K::Str, false),
];
pub(super) const ROLE_BINDING: &[F] = &[
    F(1, "metadata", K::Msg(META), false),
    F(2, "subjects", K::RepMsg(SUBJECT), false),
    F(3, "roleRef", K::Msg(ROLE_REF), false),
];
pub(super) const CLUSTER_ROLE_BINDING: &[F] = ROLE_BINDING;
