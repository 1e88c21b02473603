"""The vault as git holds it: notes read from a snapshot, their frontmatter, WikiLinks and the repository config."""
