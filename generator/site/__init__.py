"""The static site: a namespace. Import its modules by name (`generator.site.build`,
`generator.site.pages`, `generator.site.model`, ...); each says what it is for."""

__all__: list[str] = []  # a namespace: import `generator.site.<module>` by name
