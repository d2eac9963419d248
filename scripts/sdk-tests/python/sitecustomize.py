"""Lets the Python SDK 8.x run on Debian 12's httpx 0.23: the proxy argument is `proxies` there (0.26 renamed it), and
raise_for_status returns nothing (0.25 made it return the response)."""
import httpx

_AsyncClient = httpx.AsyncClient


class AsyncClient(_AsyncClient):
    def __init__(self, *args, proxy=None, **kwargs):
        if proxy is not None:
            kwargs["proxies"] = proxy
        super().__init__(*args, **kwargs)


httpx.AsyncClient = AsyncClient

_raise_for_status = httpx.Response.raise_for_status


def raise_for_status(self):
    """Returns the response, as httpx 0.25 and later do."""
    _raise_for_status(self)
    return self


httpx.Response.raise_for_status = raise_for_status
