"""One module per noun of the REST API. A handler takes the Request and
returns a webob Response; failures are raised (placement.api.errors or
placement.errors) and turned into error responses by the dispatcher."""
