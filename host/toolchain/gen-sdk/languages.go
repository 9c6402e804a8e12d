//go:build !dotnet

package main

import (
	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// The generators of github.com/pulumi/pulumi/pkg/v3 at PULUMI_VERSION, called the way their
// language plugins call them (main.go says where from).
func init() {
	generators["nodejs"] = func(pkg *schema.Package, loader schema.ReferenceLoader) (map[string][]byte, error) {
		return nodejs.GeneratePackage(tool, pkg, nil, nil, false, loader)
	}
	generators["python"] = func(pkg *schema.Package, loader schema.ReferenceLoader) (map[string][]byte, error) {
		return python.GeneratePackage(tool, pkg, nil, loader)
	}
	generators["go"] = func(pkg *schema.Package, _ schema.ReferenceLoader) (map[string][]byte, error) {
		return gogen.GeneratePackage(tool, pkg, nil)
	}
}
