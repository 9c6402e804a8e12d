module klutch.example/environment

go 1.25

require (
	github.com/anynines/klutch-pulumi/sdk/go v0.1.0
	github.com/pulumi/pulumi/sdk/v3 v3.276.0
)
