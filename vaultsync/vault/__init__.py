"""Reading the vault: YAML frontmatter, Markdown bodies, WikiLinks and their resolution, and the repository's config."""
