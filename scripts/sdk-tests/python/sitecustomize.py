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


def _identity_service_on(url):
    """The SDK fixes the identity service's address and its token URL (auth.cognite.com); Strata serves both on its
    own origin, which STRATA_IDENTITY_URL names."""
    from cognite.client import _org_client
    from cognite.client.credentials import OAuthClientCredentials

    _org_client.OrgAPIClient._AUTH_URL = url
    init = OAuthClientCredentials.__init__

    def __init__(self, token_url, *args, **kwargs):
        if token_url.startswith("https://auth.cognite.com/"):
            token_url = url + token_url[len("https://auth.cognite.com") :]
        init(self, token_url, *args, **kwargs)

    OAuthClientCredentials.__init__ = __init__


import os

if os.environ.get("STRATA_IDENTITY_URL"):
    _identity_service_on(os.environ["STRATA_IDENTITY_URL"])
