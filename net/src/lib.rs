//! What the project's HTTPS servers share about connections: the time limits of a keep-alive connection
//! as Go's `net/http` server applies them (hyper's own `header_read_timeout` also closes idle
//! connections, since it counts from the end of the previous response), and the TLS crypto provider.

pub mod conn_timeouts;
pub mod tls;
