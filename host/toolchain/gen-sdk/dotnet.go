//go:build dotnet

package main

// The .NET SDK is a build of its own (tag `dotnet`, host/scripts/toolchain.sh `build gen-sdk`): its
// generator is not in github.com/pulumi/pulumi/pkg/v3 at PULUMI_VERSION. pkg/v3 carried
// codegen/dotnet up to v3.228.0 (v3.229.0 has none); it now lives in
// github.com/pulumi/pulumi-dotnet (pulumi-language-dotnet), whose module the proxy here refuses.
// So this build links codegen/dotnet of pkg/v3 at PULUMI_DOTNET_CODEGEN_VERSION
// (host/toolchain/versions.env), the newest release that has it and that the proxy serves, and calls
// GeneratePackage(tool, pkg, extraFiles, localDependencies) as that release's language plugin
// did.
//
// That generator downloads the package's logo (gen.go, getLogo: `http.Get(pkg.LogoURL)`, by
// default a PNG on raw.githubusercontent.com) to ship it in the NuGet package. Nothing here may
// reach the internet, and a build that depends on a download is not reproducible, so every HTTP
// request of this process is answered from the file given with -logo, and only a request for a
// .png: anything else the generator might fetch fails with the URL named.

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/pulumi/pulumi/pkg/v3/codegen/dotnet"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

var logoFile = flag.String("logo", "", "PNG shipped as the .NET package's logo (the generator would download it)")

// offlineLogo is the process's HTTP transport: the logo from a local file, nothing else.
type offlineLogo struct{}

func (offlineLogo) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(strings.ToLower(req.URL.Path), ".png") {
		return nil, fmt.Errorf("klutch-gen-sdk makes no network requests; the .NET generator asked for %s", req.URL)
	}
	if *logoFile == "" {
		return nil, fmt.Errorf("the .NET generator asks for the package logo (%s): pass -logo <file.png>", req.URL)
	}
	data, err := os.ReadFile(*logoFile)
	if err != nil {
		return nil, fmt.Errorf("the package logo: %w", err)
	}
	return &http.Response{
		Status:        "200 OK",
		StatusCode:    http.StatusOK,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": []string{"image/png"}},
		Body:          io.NopCloser(bytes.NewReader(data)),
		ContentLength: int64(len(data)),
		Request:       req,
	}, nil
}

func init() {
	http.DefaultTransport = offlineLogo{}
	http.DefaultClient.Transport = offlineLogo{}
	generators["dotnet"] = func(pkg *schema.Package, _ schema.ReferenceLoader) (map[string][]byte, error) {
		return dotnet.GeneratePackage(tool, pkg, nil, nil)
	}
}
