//! A stand-in OTLP/HTTP collector on loopback for the tests: it accepts `POST /v1/traces` with protobuf
//! bodies (HTTP/1.1, keep-alive), answers 200 with an empty `ExportTraceServiceResponse`, and keeps each
//! decoded request.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use prost::Message;

/// One request the collector received.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub content_type: String,
    pub request: ExportTraceServiceRequest,
}

/// The collector: its address and what it received so far. Its threads end with the test process.
pub struct Collector {
    pub addr: SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Collector {
    pub fn start() -> Collector {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the collector on loopback");
        let addr = listener.local_addr().expect("its address");
        let received = Arc::new(Mutex::new(Vec::new()));
        let keep = received.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let keep = keep.clone();
                std::thread::spawn(move || serve(stream, &keep));
            }
        });
        Collector { addr, received }
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().expect("lock").clone()
    }

    /// Every span received, with its resource's `service.name`.
    pub fn spans(&self) -> Vec<(String, opentelemetry_proto::tonic::trace::v1::Span)> {
        self.received()
            .into_iter()
            .flat_map(|r| r.request.resource_spans)
            .flat_map(|rs| {
                let service = rs
                    .resource
                    .as_ref()
                    .and_then(|r| attribute(&r.attributes, "service.name"))
                    .unwrap_or_default();
                rs.scope_spans
                    .into_iter()
                    .flat_map(|ss| ss.spans)
                    .map(move |s| (service.clone(), s))
            })
            .collect()
    }
}

/// A string attribute's value.
pub fn attribute(attributes: &[KeyValue], key: &str) -> Option<String> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| match kv.value.as_ref() {
            Some(AnyValue {
                value: Some(any_value::Value::StringValue(s)),
            }) => Some(s.clone()),
            _ => None,
        })
}

fn serve(stream: TcpStream, keep: &Mutex<Vec<Received>>) {
    let mut writer = stream.try_clone().expect("clone the stream");
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_string();
        let (mut length, mut content_type) = (0usize, String::new());
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                match name.trim().to_ascii_lowercase().as_str() {
                    "content-length" => length = value.trim().parse().unwrap_or(0),
                    "content-type" => content_type = value.trim().to_string(),
                    _ => {}
                }
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let request = ExportTraceServiceRequest::decode(body.as_slice())
            .expect("the exporter sends an ExportTraceServiceRequest");
        keep.lock().expect("lock").push(Received {
            path,
            content_type,
            request,
        });
        let answer =
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if writer.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}
