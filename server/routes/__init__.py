"""The HTTP API's routes, one module per capability; ``create_app`` lists them."""
