"""The warm search daemon on loopback (signed JSON API) and the client the CLI uses to reach it."""
