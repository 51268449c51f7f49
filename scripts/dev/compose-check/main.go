// compose-check loads a compose file the way `docker compose` does (compose-go: schema
// validation against the current Compose Specification, interpolation, normalization and
// consistency checks such as depends_on naming a real service) without a Docker engine.
//
//	go run . ../../docker-compose.yml   (or the binary built by check.sh)
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/compose-spec/compose-go/v2/cli"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: compose-check FILE")
		os.Exit(2)
	}
	file, err := filepath.Abs(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	opts, err := cli.NewProjectOptions([]string{file}, cli.WithWorkingDirectory(filepath.Dir(file)), cli.WithOsEnv, cli.WithConsistency(true))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	project, err := opts.LoadProject(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "invalid: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("valid: project %s, services %v\n", project.Name, project.ServiceNames())
}
