//! Endpoints (v1): its columns (`formatEndpoints`: the first three `ip:port` pairs, then how many
//! more).

use serde_json::{Value, json};

use crate::registry::strategy::Strategy;
use crate::registry::table::cells::age;
use crate::registry::table::{AGE, Col, Printer};

pub struct Endpoints;

impl Strategy for Endpoints {
    fn printer(&self) -> Option<Printer> {
        Some(Printer {
            columns: &[Col("Name", "string", 0), Col("Endpoints", "string", 0), AGE],
            cells: |o| vec![json!(format_endpoints(o)), json!(age(o))],
        })
    }
}

fn format_endpoints(o: &Value) -> String {
    let subsets = o.get("subsets").and_then(Value::as_array);
    let Some(subsets) = subsets.filter(|s| !s.is_empty()) else {
        return "<none>".into();
    };
    const MAX: usize = 3;
    let (mut list, mut count, mut more) = (Vec::new(), 0, false);
    let ips = |ss: &Value| -> Vec<String> {
        ss.get("addresses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|a| a["ip"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    for ss in subsets {
        let addresses = ips(ss);
        let ports: Vec<i64> = ss
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|p| p["port"].as_i64().unwrap_or(0))
            .collect();
        if ports.is_empty() {
            count += addresses.len();
            for ip in &addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                list.push(ip.clone());
            }
            continue;
        }
        for port in ports {
            count += addresses.len();
            for ip in &addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                list.push(if ip.contains(':') {
                    format!("[{ip}]:{port}")
                } else {
                    format!("{ip}:{port}")
                });
            }
        }
    }
    let text = list.join(",");
    if more {
        format!("{text} + {} more...", count - MAX)
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn endpoints_print_three_pairs_then_how_many_more() {
        let ep = json!({"subsets": [{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}],
            "ports": [{"port": 80}, {"port": 443}]}]});
        assert_eq!(
            super::format_endpoints(&ep),
            "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more..."
        );
        assert_eq!(super::format_endpoints(&json!({})), "<none>");
    }
}
