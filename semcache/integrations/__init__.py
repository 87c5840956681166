"""Adapters that plug semcache into what callers already use.

- ``semcache.integrations.litellm``: ``litellm.cache = LiteLLMCache(SemanticCache())``.
- ``semcache.integrations.langchain``: ``set_llm_cache(LangChainCache(SemanticCache()))``
  (extra ``langchain``).
- ``semcache.integrations.llamaindex``: ``CachedLLM(llm, SemanticCache())`` (extra
  ``llamaindex``).

Each is a thin translation onto ``SemanticCache.check`` / ``store`` (``semcache.direct``), so
every tier, partition and control behaves as it does for ``SemanticCache.completion``.
"""
