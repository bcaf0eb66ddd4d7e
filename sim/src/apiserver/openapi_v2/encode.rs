//! The JSON document's conversion into gnostic's protobuf messages, as gnostic's `ParseDocument`
//! does it for kube-apiserver's handler: `x-` keys become `NamedAny`s whose `yaml` is the value as
//! YAML, JSON objects become (name, value) lists in document order, parameters and responses pick
//! their `oneof` case by `$ref` and `in`.

use std::sync::LazyLock;

use serde_json::{Map, Value};

use super::proto::*;
use super::yaml::to_yaml;

static EMPTY: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);

/// The object in `v`, or an empty one.
fn object(v: &Value) -> &Map<String, Value> {
    v.as_object().unwrap_or(&EMPTY)
}

fn text(m: &Map<String, Value>, key: &str) -> String {
    m.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn texts(m: &Map<String, Value>, key: &str) -> Vec<String> {
    m.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(String::from))
        .collect()
}

fn flag(m: &Map<String, Value>, key: &str) -> bool {
    m.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn number(m: &Map<String, Value>, key: &str) -> f64 {
    m.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

fn int(m: &Map<String, Value>, key: &str) -> i64 {
    m.get(key).and_then(Value::as_i64).unwrap_or(0)
}

fn any(v: &Value) -> Any {
    Any { yaml: to_yaml(v) }
}

/// The `x-` keys of an object, in order.
fn extensions(m: &Map<String, Value>) -> Vec<NamedAny> {
    m.iter()
        .filter(|(k, _)| k.starts_with("x-"))
        .map(|(k, v)| NamedAny {
            name: k.clone(),
            value: Some(any(v)),
        })
        .collect()
}

/// A JSON schema as gnostic's `Schema`.
pub fn schema(v: &Value) -> Schema {
    let m = object(v);
    let named = |key: &str| -> Vec<NamedSchema> {
        m.get(key)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(name, s)| NamedSchema {
                name: name.clone(),
                value: Some(schema(s)),
            })
            .collect()
    };
    Schema {
        _ref: text(m, "$ref"),
        format: text(m, "format"),
        title: text(m, "title"),
        description: text(m, "description"),
        default: m.get("default").map(any),
        multiple_of: number(m, "multipleOf"),
        maximum: number(m, "maximum"),
        exclusive_maximum: flag(m, "exclusiveMaximum"),
        minimum: number(m, "minimum"),
        exclusive_minimum: flag(m, "exclusiveMinimum"),
        max_length: int(m, "maxLength"),
        min_length: int(m, "minLength"),
        pattern: text(m, "pattern"),
        max_items: int(m, "maxItems"),
        min_items: int(m, "minItems"),
        unique_items: flag(m, "uniqueItems"),
        max_properties: int(m, "maxProperties"),
        min_properties: int(m, "minProperties"),
        required: texts(m, "required"),
        r#enum: m
            .get("enum")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(any)
            .collect(),
        additional_properties: m
            .get("additionalProperties")
            .map(|a| AdditionalPropertiesItem {
                oneof: Some(match a {
                    Value::Bool(b) => AdditionalProperties::Boolean(*b),
                    other => AdditionalProperties::Schema(Box::new(schema(other))),
                }),
            }),
        r#type: m.get("type").map(|t| TypeItem {
            value: match t {
                Value::Array(a) => a
                    .iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect(),
                other => other.as_str().map(String::from).into_iter().collect(),
            },
        }),
        items: m.get("items").map(|i| ItemsItem {
            schema: match i {
                Value::Array(a) => a.iter().map(schema).collect(),
                one => vec![schema(one)],
            },
        }),
        all_of: m
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(schema)
            .collect(),
        properties: m.contains_key("properties").then(|| Properties {
            additional_properties: named("properties"),
        }),
        discriminator: text(m, "discriminator"),
        read_only: flag(m, "readOnly"),
        example: m.get("example").map(any),
        vendor_extension: extensions(m),
    }
}

/// A parameter (not a `$ref`): in the body, or in the query or path.
fn parameter(m: &Map<String, Value>) -> Parameter {
    let oneof = match m.get("in").and_then(Value::as_str) {
        Some("body") => ParameterOneof::BodyParameter(Box::new(BodyParameter {
            description: text(m, "description"),
            name: text(m, "name"),
            r#in: text(m, "in"),
            required: flag(m, "required"),
            schema: m.get("schema").map(schema),
        })),
        Some("path") => ParameterOneof::NonBodyParameter(NonBodyParameter {
            oneof: Some(NonBodyParameterOneof::PathParameterSubSchema(
                PathParameterSubSchema {
                    required: flag(m, "required"),
                    r#in: text(m, "in"),
                    description: text(m, "description"),
                    name: text(m, "name"),
                    r#type: text(m, "type"),
                    unique_items: flag(m, "uniqueItems"),
                },
            )),
        }),
        _ => ParameterOneof::NonBodyParameter(NonBodyParameter {
            oneof: Some(NonBodyParameterOneof::QueryParameterSubSchema(
                QueryParameterSubSchema {
                    required: flag(m, "required"),
                    r#in: text(m, "in"),
                    description: text(m, "description"),
                    name: text(m, "name"),
                    r#type: text(m, "type"),
                    unique_items: flag(m, "uniqueItems"),
                },
            )),
        }),
    };
    Parameter { oneof: Some(oneof) }
}

fn parameters_items(v: Option<&Value>) -> Vec<ParametersItem> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| {
            let m = object(p);
            let oneof = match m.get("$ref").and_then(Value::as_str) {
                Some(r) => ParametersItemOneof::JsonReference(JsonReference {
                    _ref: r.to_string(),
                    description: text(m, "description"),
                }),
                None => ParametersItemOneof::Parameter(Box::new(parameter(m))),
            };
            ParametersItem { oneof: Some(oneof) }
        })
        .collect()
}

fn operation(v: &Value) -> Operation {
    let m = object(v);
    Operation {
        tags: texts(m, "tags"),
        summary: text(m, "summary"),
        description: text(m, "description"),
        operation_id: text(m, "operationId"),
        produces: texts(m, "produces"),
        consumes: texts(m, "consumes"),
        parameters: parameters_items(m.get("parameters")),
        responses: m
            .get("responses")
            .and_then(Value::as_object)
            .map(|r| Responses {
                response_code: r
                    .iter()
                    .filter(|(k, _)| !k.starts_with("x-"))
                    .map(|(code, resp)| {
                        let rm = object(resp);
                        NamedResponseValue {
                            name: code.clone(),
                            value: Some(ResponseValue {
                                response: Some(Response {
                                    description: text(rm, "description"),
                                    schema: rm.get("schema").map(|s| SchemaItem {
                                        schema: Some(schema(s)),
                                    }),
                                }),
                            }),
                        }
                    })
                    .collect(),
                vendor_extension: extensions(r),
            }),
        schemes: texts(m, "schemes"),
        deprecated: flag(m, "deprecated"),
        vendor_extension: extensions(m),
    }
}

fn path_item(v: &Value) -> PathItem {
    let m = object(v);
    let op = |verb: &str| m.get(verb).map(operation);
    PathItem {
        _ref: text(m, "$ref"),
        get: op("get"),
        put: op("put"),
        post: op("post"),
        delete: op("delete"),
        options: op("options"),
        head: op("head"),
        patch: op("patch"),
        parameters: parameters_items(m.get("parameters")),
        vendor_extension: extensions(m),
    }
}

/// The JSON document as the protobuf `Document` kube-apiserver serves.
pub fn document(doc: &Value) -> Document {
    let m = object(doc);
    let info = m.get("info").map(object).map(|i| Info {
        title: text(i, "title"),
        version: text(i, "version"),
        description: text(i, "description"),
    });
    let paths = m.get("paths").map(object).map(|p| Paths {
        vendor_extension: extensions(p),
        path: p
            .iter()
            .filter(|(k, _)| !k.starts_with("x-"))
            .map(|(name, item)| NamedPathItem {
                name: name.clone(),
                value: Some(path_item(item)),
            })
            .collect(),
    });
    let definitions = m.get("definitions").map(object).map(|d| Definitions {
        additional_properties: d
            .iter()
            .map(|(name, s)| NamedSchema {
                name: name.clone(),
                value: Some(schema(s)),
            })
            .collect(),
    });
    let parameters = m
        .get("parameters")
        .map(object)
        .map(|p| ParameterDefinitions {
            additional_properties: p
                .iter()
                .map(|(name, v)| NamedParameter {
                    name: name.clone(),
                    value: Some(parameter(object(v))),
                })
                .collect(),
        });
    let security = m
        .get("security")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|req| SecurityRequirement {
            additional_properties: object(req)
                .iter()
                .map(|(name, scopes)| NamedStringArray {
                    name: name.clone(),
                    value: Some(StringArray {
                        value: scopes
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|s| s.as_str().map(String::from))
                            .collect(),
                    }),
                })
                .collect(),
        })
        .collect();
    let security_definitions =
        m.get("securityDefinitions")
            .map(object)
            .map(|s| SecurityDefinitions {
                additional_properties: s
                    .iter()
                    .map(|(name, def)| {
                        let d = object(def);
                        NamedSecurityDefinitionsItem {
                            name: name.clone(),
                            value: Some(SecurityDefinitionsItem {
                                api_key_security: Some(ApiKeySecurity {
                                    r#type: text(d, "type"),
                                    name: text(d, "name"),
                                    r#in: text(d, "in"),
                                    description: text(d, "description"),
                                }),
                            }),
                        }
                    })
                    .collect(),
            });
    Document {
        swagger: text(m, "swagger"),
        info,
        paths,
        definitions,
        parameters,
        security,
        security_definitions,
        vendor_extension: extensions(m),
    }
}

/// The document's protobuf bytes.
pub fn encode(doc: &Value) -> Vec<u8> {
    prost::Message::encode_to_vec(&document(doc))
}

#[cfg(test)]
mod tests {
    use prost::Message;
    use serde_json::json;

    use super::*;
    use crate::registry::Registry;

    /// A small document (keys sorted, so any `serde_json` map order reads it alike) and the bytes
    /// gnostic-models v0.6.9 (kube-openapi's) makes of it: `ParseDocument`, then `proto.Marshal`.
    const SMALL_JSON: &str = include_str!("../../../tests/data/openapi-v2-small.json");
    const SMALL_PB_HEX: &str = include_str!("../../../tests/data/openapi-v2-small.pb.hex");

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn encodes_byte_for_byte_as_gnostic() {
        let doc: Value = serde_json::from_str(SMALL_JSON).expect("json");
        assert_eq!(hex(&encode(&doc)), SMALL_PB_HEX.trim());
    }

    fn ext<'a>(exts: &'a [NamedAny], name: &str) -> Option<&'a str> {
        exts.iter()
            .find(|e| e.name == name)
            .and_then(|e| e.value.as_ref())
            .map(|v| v.yaml.as_str())
    }

    #[test]
    fn the_served_document_round_trips_through_prost() {
        let (doc, _) = super::super::document(&Registry::default().all());
        let bytes = encode(&doc);
        let back = Document::decode(bytes.as_slice()).expect("decodes");
        assert_eq!(back, document(&doc));
        assert_eq!(back.swagger, "2.0");
        let defs = back.definitions.expect("definitions").additional_properties;
        let deploy = defs
            .iter()
            .find(|d| d.name == "io.k8s.api.apps.v1.Deployment")
            .and_then(|d| d.value.clone())
            .expect("Deployment");
        assert_eq!(
            deploy.r#type.map(|t| t.value),
            Some(vec!["object".to_string()])
        );
        assert_eq!(
            ext(&deploy.vendor_extension, "x-kubernetes-group-version-kind"),
            Some("- group: apps\n  kind: Deployment\n  version: v1\n")
        );
        let spec = deploy
            .properties
            .expect("properties")
            .additional_properties
            .into_iter()
            .find(|p| p.name == "spec")
            .and_then(|p| p.value)
            .expect("spec");
        assert_eq!(spec._ref, "#/definitions/io.k8s.api.apps.v1.DeploymentSpec");
        let paths = back.paths.expect("paths").path;
        let item = paths
            .iter()
            .find(|p| p.name == "/apis/apps/v1/namespaces/{namespace}/deployments/{name}")
            .and_then(|p| p.value.clone())
            .expect("deployment path");
        let patch = item.patch.expect("patch");
        assert!(
            patch
                .consumes
                .contains(&"application/strategic-merge-patch+json".to_string())
        );
        assert_eq!(
            ext(&patch.vendor_extension, "x-kubernetes-group-version-kind"),
            Some("group: apps\nkind: Deployment\nversion: v1\n")
        );
    }

    #[test]
    fn schemas_keep_what_kube_openapi_reads() {
        let s = schema(&json!({
            "type": "object", "properties": {}, "additionalProperties": true,
            "items": {}, "enum": ["a", 1], "x-kubernetes-list-type": "map",
            "maximum": 10, "exclusiveMaximum": true, "maxLength": 3, "required": ["a"],
        }));
        // Present but empty: kube-openapi reads an object with `properties` as a kind.
        assert_eq!(s.properties, Some(Properties::default()));
        assert_eq!(
            s.additional_properties.and_then(|a| a.oneof),
            Some(AdditionalProperties::Boolean(true))
        );
        assert_eq!(s.items.map(|i| i.schema.len()), Some(1));
        let values: Vec<String> = s.r#enum.into_iter().map(|a| a.yaml).collect();
        assert_eq!(values, ["a\n", "1\n"]);
        assert_eq!(
            ext(&s.vendor_extension, "x-kubernetes-list-type"),
            Some("map\n")
        );
        assert_eq!(
            (s.maximum, s.exclusive_maximum, s.max_length),
            (10.0, true, 3)
        );
        assert_eq!(s.required, ["a"]);
    }
}
