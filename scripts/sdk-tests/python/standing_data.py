"""Writes the time series and data points the Python SDK's data point tests read (the standing data of the
SDK's test project), with the SDK's own generator, scripts/create_ts_for_integration_tests.py in its checkout.
Usage: standing_data.py BASE_URL PROJECT TOKEN (run from the SDK checkout, which must be on sys.path)."""
import sys

from cognite.client import ClientConfig, CogniteClient
from cognite.client.credentials import Token
from cognite.client.data_classes import TimeSeriesWrite, TimeSeriesWriteList
from cognite.client.data_classes.data_modeling import SpaceApply
from scripts import create_ts_for_integration_tests as gen


# The generator builds its series with the read class, whose constructor 8.x no longer takes without ids and
# times: the write class takes what it gives.
gen.TimeSeries = TimeSeriesWrite
gen.TimeSeriesList = TimeSeriesWriteList


def create_sparse_time_series(client: CogniteClient) -> None:
    """The generator's two series of one point each, at the first and the last timestamp the API takes (its own
    function builds them with a constructor 8.x no longer has)."""
    existing = {t.external_id for t in client.time_series.retrieve_multiple(external_ids=gen.SPARSE_NAMES, ignore_unknown_ids=True)}
    missing = [name for name in gen.SPARSE_NAMES if name not in existing]
    if missing:
        client.time_series.create([TimeSeriesWrite(name=name, external_id=name, is_string=False) for name in missing])
    timestamps = {gen.SPARSE_NAMES[0]: gen.MIN_TIMESTAMP_MS, gen.SPARSE_NAMES[1]: gen.MAX_TIMESTAMP_MS}
    client.time_series.data.insert_multiple([{"external_id": name, "datapoints": [(timestamps[name], timestamps[name])]} for name in missing])


def main() -> None:
    base, project, token = sys.argv[1:4]
    client = CogniteClient(ClientConfig(client_name="strata-standing-data", project=project, base_url=base, credentials=Token(token)))
    ts_lst, df_lst = gen.create_dense_time_series()
    gen.create_if_not_exists(client.time_series, ts_lst, df_lst)
    create_sparse_time_series(client)
    gen.create_status_code_ts(client)
    client.data_modeling.spaces.apply(SpaceApply(gen.NAMES_USING_INSTANCE_ID[0].space))
    gen.create_instance_id_ts(client)
    gen.clone_datapoints_to_dms_ts(client)


if __name__ == "__main__":
    main()
