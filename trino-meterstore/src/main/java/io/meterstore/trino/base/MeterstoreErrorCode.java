package io.meterstore.trino.base;

import io.meterstore.core.MeterstoreException;
import io.trino.spi.ErrorCode;
import io.trino.spi.ErrorCodeSupplier;
import io.trino.spi.ErrorType;
import io.trino.spi.TrinoException;

import static io.trino.spi.ErrorType.EXTERNAL;
import static io.trino.spi.ErrorType.USER_ERROR;

/** MeterStore's error codes, in a range of their own; codes are never renumbered or reused. */
public enum MeterstoreErrorCode
        implements ErrorCodeSupplier
{
    METERSTORE_TABLE_NOT_FOUND(0, USER_ERROR),
    METERSTORE_WATERMARK_MISSING(1, EXTERNAL),
    METERSTORE_WATERMARK_CHAIN_BROKEN(2, EXTERNAL),
    METERSTORE_WATERMARK_MALFORMED(3, EXTERNAL),
    METERSTORE_UNSUPPORTED_TABLE_LAYOUT(4, EXTERNAL),
    METERSTORE_PARTITION_MISSING(5, EXTERNAL),
    METERSTORE_POSTGRES_UNAVAILABLE(6, EXTERNAL),
    METERSTORE_CATALOG_UNAVAILABLE(7, EXTERNAL),
    METERSTORE_HOT_READ_FAILED(8, EXTERNAL),
    METERSTORE_COLD_READ_FAILED(9, EXTERNAL),
    METERSTORE_INVALID_READING(10, USER_ERROR),
    METERSTORE_SNAPSHOT_NOT_FOUND(11, USER_ERROR),
    METERSTORE_CONFLICTING_REDELIVERY(12, USER_ERROR),
    METERSTORE_WRITE_FAILED(13, EXTERNAL),
    METERSTORE_INVALID_ARGUMENT(14, USER_ERROR),
    METERSTORE_ERASED(15, USER_ERROR),
    METERSTORE_DELETE_NOT_SUPPORTED(16, USER_ERROR),
    METERSTORE_ERASURE_KEY_MISSING(17, USER_ERROR),
    METERSTORE_HOT_SNAPSHOT_ENDED(18, EXTERNAL),
    METERSTORE_TABLE_SHAPE_MISMATCH(19, USER_ERROR),
    METERSTORE_DROP_TABLE_REFUSED(21, USER_ERROR),
    /**/;

    private final ErrorCode errorCode;

    MeterstoreErrorCode(int code, ErrorType type)
    {
        errorCode = new ErrorCode(code + 0x0A4D_0000, name(), type);
    }

    @Override
    public ErrorCode toErrorCode()
    {
        return errorCode;
    }

    /** Translates a core refusal into the error a Trino user sees, keeping its message. */
    public static TrinoException toTrinoException(MeterstoreException e)
    {
        MeterstoreErrorCode code = switch (e.reason()) {
            case WATERMARK_MISSING -> METERSTORE_WATERMARK_MISSING;
            case WATERMARK_CHAIN_BROKEN -> METERSTORE_WATERMARK_CHAIN_BROKEN;
            case WATERMARK_MALFORMED -> METERSTORE_WATERMARK_MALFORMED;
            case TABLE_LAYOUT_UNSUPPORTED -> METERSTORE_UNSUPPORTED_TABLE_LAYOUT;
            case PARTITION_MISSING -> METERSTORE_PARTITION_MISSING;
            case POSTGRES_UNAVAILABLE -> METERSTORE_POSTGRES_UNAVAILABLE;
            case CATALOG_UNAVAILABLE -> METERSTORE_CATALOG_UNAVAILABLE;
            case TABLE_MISSING -> METERSTORE_TABLE_NOT_FOUND;
            case PARTITION_BOUNDS_UNSUPPORTED -> METERSTORE_UNSUPPORTED_TABLE_LAYOUT;
            case SUMMARY_MALFORMED -> METERSTORE_WATERMARK_MALFORMED;
            case SHAPE_MISMATCH -> METERSTORE_TABLE_SHAPE_MISMATCH;
        };
        return new TrinoException(code, e.getMessage(), e);
    }
}
