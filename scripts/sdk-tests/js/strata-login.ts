// Stand-in for the SDK tests' login(): a client-credentials token from Strata's built-in identity provider.
export const login = async () => {
  const res = await fetch(`${process.env.COGNITE_BASE_URL}/oauth2/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: process.env.COGNITE_CLIENT_ID ?? '',
      client_secret: process.env.COGNITE_CLIENT_SECRET ?? '',
    }),
  });
  return res.json();
};
