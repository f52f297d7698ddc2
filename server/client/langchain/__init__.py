"""SGAM for LangGraph and LangChain (the ``langchain`` extra): a store and a retriever.

    store = SGAMStore(SGAMClient(url, api_key))
    graph = builder.compile(store=store)

``SGAMStore`` is LangGraph's ``BaseStore`` on the HTTP API, through the client alone: the
tenant is the API key's. A namespace is a subject (its labels joined by ``.``), a key an
attribute, an item's value the fact the write path keeps for them. ``put`` records an episode
with the candidate asserting the value (a key not yet declared becomes a JSON attribute);
``delete`` expires the key, so the value stays in its history; ``search`` reads the
namespaces' profiles and, with a query, ranks each item by how similar the episode that put
its value is (evidence search); ``list_namespaces`` lists the subjects.

``SGAMContextRetriever`` is a LangChain retriever: the cited context block for a query, one
document per fact and evidence line, its citations in the metadata.
"""

from server.client.langchain.plans import PutRefused
from server.client.langchain.retriever import SGAMContextRetriever
from server.client.langchain.store import SGAMStore

__all__ = ["PutRefused", "SGAMContextRetriever", "SGAMStore"]
