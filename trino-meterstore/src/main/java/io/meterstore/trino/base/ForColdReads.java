package io.meterstore.trino.base;

import com.google.inject.BindingAnnotation;

import java.lang.annotation.Retention;
import java.lang.annotation.Target;

import static java.lang.annotation.ElementType.FIELD;
import static java.lang.annotation.ElementType.METHOD;
import static java.lang.annotation.ElementType.PARAMETER;
import static java.lang.annotation.RetentionPolicy.RUNTIME;

/**
 * The file system that reads the cold tier's metadata and scans its files: on the coordinator it keeps the files it
 * reads in memory ({@code meterstore.coordinator-file-cache.enabled}); elsewhere, and for writes, it is the storage's own.
 */
@Retention(RUNTIME)
@Target({FIELD, PARAMETER, METHOD})
@BindingAnnotation
public @interface ForColdReads
{
}
