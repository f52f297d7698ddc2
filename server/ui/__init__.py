"""The timeline pages (``/ui``): server-rendered, signed in with an API key, one tenant's data."""
