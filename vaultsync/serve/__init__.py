"""The warm search daemon: a signed JSON API on loopback, and the client that talks to it."""
