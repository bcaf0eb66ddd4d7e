//! piceli-sim: a local Kubernetes API server (being built; see issue 3).
