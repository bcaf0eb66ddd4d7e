// Command etcd is etcd's own server (go.etcd.io/etcd/server/v3/etcdmain), built from the release that
// k8s.io/kubernetes v1.33 requires, so the real control plane of scripts/real-cluster.sh needs no download.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
