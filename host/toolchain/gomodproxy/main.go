// Command gomodproxy writes one version of a Go module as a module proxy serves it, so that
// `GOPROXY=file://<out>` hands it to the go command like any published module (the layout of
// https://go.dev/ref/mod#goproxy-protocol):
//
//	<out>/<escaped module path>/@v/list
//	<out>/<escaped module path>/@v/<version>.info   {"Version", "Time"}
//	<out>/<escaped module path>/@v/<version>.mod    the module's go.mod
//	<out>/<escaped module path>/@v/<version>.zip    made by golang.org/x/mod/zip, the go command's own rules
//
// The zip has no file times and its files in lexical order, so one source gives the same bytes.
//
//	go run . <module dir> <module path> <version> <RFC 3339 time> <out>
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gomodproxy:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 5 {
		return fmt.Errorf("usage: gomodproxy <module dir> <module path> <version> <time> <out>")
	}
	dir, path, version, time, out := args[0], args[1], args[2], args[3], args[4]
	escaped, err := module.EscapePath(path)
	if err != nil {
		return err
	}
	v := filepath.Join(out, escaped, "@v")
	if err := os.MkdirAll(v, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(v, version+".zip"))
	if err != nil {
		return err
	}
	if err := zip.CreateFromDir(f, module.Version{Path: path, Version: version}, dir); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	info, err := json.Marshal(struct{ Version, Time string }{version, time})
	if err != nil {
		return err
	}
	for name, body := range map[string][]byte{
		version + ".mod":  mod,
		version + ".info": info,
		"list":            []byte(version + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(v, name), body, 0o644); err != nil {
			return err
		}
	}
	return nil
}
