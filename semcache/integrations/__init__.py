"""Adapters that plug semcache into LiteLLM, LangChain and LlamaIndex, each a thin translation
onto ``SemanticCache.check`` / ``store``, so every tier, partition and control behaves as it
does for ``SemanticCache.completion``.
"""
