"""The values the facade returns, by area: facts and search (`facts`), the knowledge graph
(`graph`), the interaction log (`conversation`), code search (`code`) and the store's health
(`store`). The public names are exported by `memcore` itself."""
